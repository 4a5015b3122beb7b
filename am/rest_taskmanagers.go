package am

import "net/http"

type taskManagerBody struct {
	ID              string `json:"id"`
	Node            string `json:"node"`
	DataAddress     string `json:"dataAddress"`
	TimeSinceJoined int64  `json:"timeSinceJoined"`
	SlotsNumber     int    `json:"slotsNumber"`
	FreeSlots       int    `json:"freeSlots"`
	Joined          int64  `json:"joined"`
}

// getTaskManagers serves GET /taskmanagers.
func (a *AM) getTaskManagers(w http.ResponseWriter, _ *http.Request) {
	s := a.view.snapshot()
	now := a.clock.Now()
	out := []taskManagerBody{}
	for _, tm := range s.TaskManagers {
		out = append(out, taskManagerBody{ID: string(tm.ID), Node: string(tm.Node), DataAddress: tm.DataAddress,
			SlotsNumber: tm.Slots, FreeSlots: tm.Slots - s.UsedSlots[tm.ID], Joined: millis(tm.Joined),
			TimeSinceJoined: now.Sub(tm.Joined).Milliseconds()})
	}
	writeJSON(w, http.StatusOK, map[string]any{"taskmanagers": out})
}
