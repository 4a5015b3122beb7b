package am

import (
	"context"
	"maps"
	"time"

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
	b.SwitchDowntime = -1
	if w := r.Warmup; w != nil {
		b.BytesMoved, b.WarmupDuration = w.Bytes, w.Duration.Milliseconds()
		b.Warmup = &api.RescaleWarmup{Planned: w.Planned, Ready: w.Ready, Failed: w.Failed, Skipped: w.Skipped, TimedOut: w.TimedOut}
	}
	return b
}

// addRestore adds what the rescale's attempt restored: its downloads count as bytes moved
// (a move without warm-up downloads the moved state at restore; with local recovery a
// subtask that stays downloads at most what its local files lack).
func addRestore(b *api.Rescale, r restoreBytes) {
	if b.Outcome != string(core.RescaleCompleted) || b.Attempt == 0 {
		return
	}
	b.RestoreLocalBytes, b.RestoreDownloadedBytes = r.local, r.downloaded
	b.BytesMoved += r.downloaded
}

// Rescales is GET /jobs/:jobid/rescales: the rescale history, oldest first, and the
// rescale under way (nil when none).
func (a *AM) Rescales(ctx context.Context) (api.Rescales, error) {
	var (
		history  []core.Rescale
		current  core.Rescale
		ok       bool
		downtime map[int]time.Duration
		restored map[core.AttemptID]restoreBytes
	)
	if err := a.inspect(ctx, func() {
		history = a.sched.RescaleHistory()
		current, ok = a.sched.CurrentRescale()
		downtime = maps.Clone(a.warm.downtime)
		restored = map[core.AttemptID]restoreBytes{}
		for _, r := range history {
			restored[r.Attempt] = a.warm.restoreTotals(r.Attempt)
		}
	}); err != nil {
		return api.Rescales{}, unavailable(err)
	}
	out := make([]api.Rescale, 0, len(history))
	for _, r := range history {
		b := rescaleJSON(r)
		addRestore(&b, restored[r.Attempt])
		if d, ok := downtime[r.ID]; ok {
			b.SwitchDowntime = d.Milliseconds()
		}
		out = append(out, b)
	}
	var cur *api.Rescale
	if ok {
		b := rescaleJSON(current)
		cur = &b
	}
	return api.Rescales{Rescales: out, Current: cur}, nil
}
