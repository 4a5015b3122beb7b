package am

import (
	"net/http"

	"github.com/tidestream/tide/core"
)

type rescaleVertex struct {
	Vertex string `json:"vertex"`
	Before int    `json:"before"`
	After  int    `json:"after"`
}

type rescaleState struct {
	State      string `json:"state"`
	Enter      int64  `json:"enter"`
	Leave      int64  `json:"leave"`
	DurationMS int64  `json:"duration"`
}

type rescaleBody struct {
	ID         int             `json:"id"`
	Trigger    string          `json:"trigger"`
	Cause      string          `json:"cause"`
	Outcome    string          `json:"outcome"`
	Start      int64           `json:"start"`
	End        int64           `json:"end"`
	DurationMS int64           `json:"duration"`
	Attempt    int64           `json:"attempt"`
	Vertices   []rescaleVertex `json:"vertices"`
	States     []rescaleState  `json:"schedulerStates"`
}

func rescaleJSON(r core.Rescale) rescaleBody {
	b := rescaleBody{ID: r.ID, Trigger: string(r.Trigger), Cause: r.Cause, Outcome: string(r.Outcome),
		Start: millis(r.Start), End: millis(r.End), DurationMS: r.Duration().Milliseconds(),
		Attempt: int64(r.Attempt), Vertices: []rescaleVertex{}, States: []rescaleState{}}
	for _, st := range r.States {
		d := int64(-1)
		if !st.Leave.IsZero() {
			d = st.Leave.Sub(st.Enter).Milliseconds()
		}
		b.States = append(b.States, rescaleState{State: string(st.State), Enter: millis(st.Enter), Leave: millis(st.Leave), DurationMS: d})
	}
	for _, v := range r.Vertices {
		b.Vertices = append(b.Vertices, rescaleVertex{Vertex: string(v.Vertex), Before: v.Before, After: v.After})
	}
	return b
}

// getRescales serves GET /jobs/:jobid/rescales: the rescale history, oldest first, and
// the rescale under way ("current", null when none).
func (a *AM) getRescales(w http.ResponseWriter, r *http.Request) {
	var (
		history []core.Rescale
		current core.Rescale
		ok      bool
	)
	if err := a.inspect(r.Context(), func() {
		history = a.sched.RescaleHistory()
		current, ok = a.sched.CurrentRescale()
	}); err != nil {
		writeError(w, http.StatusServiceUnavailable, err.Error())
		return
	}
	out := make([]rescaleBody, 0, len(history))
	for _, r := range history {
		out = append(out, rescaleJSON(r))
	}
	var cur *rescaleBody
	if ok {
		b := rescaleJSON(current)
		cur = &b
	}
	writeJSON(w, http.StatusOK, map[string]any{"rescales": out, "current": cur})
}
