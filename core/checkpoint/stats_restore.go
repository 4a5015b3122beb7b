package checkpoint

import (
	"slices"
	"time"
)

// RestoreStats takes over the statistics an earlier AM attempt persisted, before this
// attempt triggers anything: the counters go on from there. Checkpoints that were in
// progress when that attempt ended never complete: they count and show as failed, with
// reason.
func (c *Coordinator) RestoreStats(now time.Time, st Stats, reason string) {
	s := &c.stats
	s.counts = st.Counts
	s.counts.Failed += s.counts.InProgress
	s.counts.InProgress = 0
	s.history = s.history[:0]
	for _, e := range slices.Backward(st.History) { // st.History is newest first
		if e.Status == StatusInProgress {
			e.Status, e.FailureTimestamp, e.FailureMessage = StatusFailed, now.UnixMilli(), reason
		}
		s.history = append(s.history, e)
	}
	s.trim()
	s.lastDone, s.lastSP, s.failedE, s.restore = nil, nil, nil, nil
	if l := st.Latest.Completed; l != nil {
		e := *l
		s.lastDone = &e
	}
	if l := st.Latest.Savepoint; l != nil {
		e := *l
		s.lastSP = &e
	}
	if l := st.Latest.Failed; l != nil {
		e := *l
		s.failedE = &e
	}
	if l := st.Latest.Restored; l != nil {
		e := *l
		s.restore = &e
	}
}
