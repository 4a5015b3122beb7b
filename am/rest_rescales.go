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
}

func rescaleJSON(r core.Rescale) rescaleBody {
	b := rescaleBody{ID: r.ID, Trigger: string(r.Trigger), Cause: r.Cause, Outcome: string(r.Outcome),
		Start: millis(r.Start), End: millis(r.End), DurationMS: r.Duration().Milliseconds(),
		Attempt: int64(r.Attempt), Vertices: []rescaleVertex{}}
	for _, v := range r.Vertices {
		b.Vertices = append(b.Vertices, rescaleVertex{Vertex: string(v.Vertex), Before: v.Before, After: v.After})
	}
	return b
}

// getRescales serves GET /jobs/:jobid/rescales: the rescale history, oldest first.
func (a *AM) getRescales(w http.ResponseWriter, _ *http.Request) {
	s := a.view.snapshot()
	out := make([]rescaleBody, 0, len(s.Rescales))
	for _, r := range s.Rescales {
		out = append(out, rescaleJSON(r))
	}
	writeJSON(w, http.StatusOK, map[string]any{"rescales": out})
}
