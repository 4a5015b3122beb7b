package am

import (
	"context"

	"github.com/tidestream/tide/api"

	"github.com/tidestream/tide/core"
)

func rescaleJSON(r core.Rescale) api.Rescale {
	b := api.Rescale{ID: int64(r.ID), Trigger: string(r.Trigger), Cause: r.Cause, Outcome: string(r.Outcome),
		Start: millis(r.Start), End: millis(r.End), Duration: r.Duration().Milliseconds(),
		Attempt: int64(r.Attempt), Vertices: []api.RescaleVertex{}, States: []api.RescaleState{}, KeyGroupsMoved: r.KeyGroupsMoved}
	for _, st := range r.States {
		d := int64(-1)
		if !st.Leave.IsZero() {
			d = st.Leave.Sub(st.Enter).Milliseconds()
		}
		b.States = append(b.States, api.RescaleState{State: string(st.State), Enter: millis(st.Enter), Leave: millis(st.Leave), Duration: d})
	}
	for _, v := range r.Vertices {
		b.Vertices = append(b.Vertices, api.RescaleVertex{Vertex: string(v.Vertex), Before: v.Before, After: v.After})
	}
	return b
}

// Rescales is GET /jobs/:jobid/rescales: the rescale history, oldest first, and the
// rescale under way (nil when none).
func (a *AM) Rescales(ctx context.Context) (api.Rescales, error) {
	var (
		history []core.Rescale
		current core.Rescale
		ok      bool
	)
	if err := a.inspect(ctx, func() {
		history = a.sched.RescaleHistory()
		current, ok = a.sched.CurrentRescale()
	}); err != nil {
		return api.Rescales{}, unavailable(err)
	}
	out := make([]api.Rescale, 0, len(history))
	for _, r := range history {
		out = append(out, rescaleJSON(r))
	}
	var cur *api.Rescale
	if ok {
		b := rescaleJSON(current)
		cur = &b
	}
	return api.Rescales{Rescales: out, Current: cur}, nil
}
