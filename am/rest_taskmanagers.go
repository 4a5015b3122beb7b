package am

import (
	"fmt"
	"net"
	"net/http"
	"strconv"

	"github.com/tidestream/tide/core"
)

type taskManagerBody struct {
	ID                     string `json:"id"`
	Path                   string `json:"path"`
	Node                   string `json:"node"`
	DataAddress            string `json:"dataAddress"`
	DataPort               int    `json:"dataPort"`
	TimeSinceLastHeartbeat int64  `json:"timeSinceLastHeartbeat"`
	SlotsNumber            int    `json:"slotsNumber"`
	FreeSlots              int    `json:"freeSlots"`
	Blocked                bool   `json:"blocked"`
	Registered             int64  `json:"registered"`
}

// taskManagerBodies joins the core's TaskManagers with the connection data of the view.
func (a *AM) taskManagerBodies(r *http.Request) ([]taskManagerBody, error) {
	var tms []core.TaskManagerInfo
	if err := a.inspect(r.Context(), func() { tms = a.sched.TaskManagers() }); err != nil {
		return nil, err
	}
	conns := map[core.TaskManagerID]tmView{}
	for _, tm := range a.view.snapshot().TaskManagers {
		conns[tm.ID] = tm
	}
	now := a.clock.Now()
	out := make([]taskManagerBody, 0, len(tms))
	for _, tm := range tms {
		b := taskManagerBody{ID: string(tm.ID), Node: string(tm.Node), SlotsNumber: tm.Slots, FreeSlots: tm.Free,
			Blocked: tm.Blocked, Registered: millis(tm.Registered), TimeSinceLastHeartbeat: -1}
		if !tm.LastHeartbeat.IsZero() {
			b.TimeSinceLastHeartbeat = now.Sub(tm.LastHeartbeat).Milliseconds()
		}
		if c, ok := conns[tm.ID]; ok {
			b.DataAddress, b.DataPort, b.Path = c.DataAddress, portOf(c.DataAddress), c.DataAddress
		}
		out = append(out, b)
	}
	return out, nil
}

// portOf is the port of a host:port address, -1 if it has none.
func portOf(addr string) int {
	_, p, err := net.SplitHostPort(addr)
	if err != nil {
		return -1
	}
	port, err := strconv.Atoi(p)
	if err != nil {
		return -1
	}
	return port
}

// getTaskManagers serves GET /taskmanagers.
func (a *AM) getTaskManagers(w http.ResponseWriter, r *http.Request) {
	tms, err := a.taskManagerBodies(r)
	if err != nil {
		writeError(w, http.StatusServiceUnavailable, err.Error())
		return
	}
	writeJSON(w, http.StatusOK, map[string]any{"taskmanagers": tms})
}

// getTaskManager serves GET /taskmanagers/:taskmanagerid.
func (a *AM) getTaskManager(w http.ResponseWriter, r *http.Request) {
	tms, err := a.taskManagerBodies(r)
	if err != nil {
		writeError(w, http.StatusServiceUnavailable, err.Error())
		return
	}
	id := r.PathValue("tmid")
	for _, tm := range tms {
		if tm.ID == id {
			writeJSON(w, http.StatusOK, tm)
			return
		}
	}
	writeError(w, http.StatusNotFound, fmt.Sprintf("TaskManager %s not found: GET /taskmanagers lists the registered ones", id))
}
