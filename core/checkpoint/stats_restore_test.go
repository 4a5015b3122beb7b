package checkpoint

import (
	"testing"
	"time"
)

// The statistics an earlier AM attempt persisted carry on; its checkpoint in progress
// never completes and counts as failed.
func TestRestoreStatsContinuesCounters(t *testing.T) {
	old := newCoord(t, func(cfg *Config) { cfg.HistorySize = 3 })
	for i := range 4 {
		complete(t, old, at(time.Duration(i)*time.Minute), int64(i+1))
	}
	old.Trigger(at(10*time.Minute), 5, all)
	persisted := old.Stats()

	c := newCoord(t, func(cfg *Config) { cfg.HistorySize = 3 })
	c.RestoreStats(at(11*time.Minute), persisted, "the AM failed over")
	st := c.Stats()
	want := Counts{Total: 5, Completed: 4, Failed: 1}
	if st.Counts != want {
		t.Fatalf("counts = %+v, want %+v", st.Counts, want)
	}
	if len(st.History) != 3 || st.History[0].ID != 5 || st.History[0].Status != StatusFailed ||
		st.History[0].FailureMessage != "the AM failed over" || st.History[2].ID != 3 {
		t.Fatalf("history = %+v", st.History)
	}
	if st.Latest.Completed == nil || st.Latest.Completed.ID != 4 {
		t.Fatalf("latest = %+v", st.Latest)
	}
	c.Adopt([]int64{4}, 5)
	c.Restored(at(12*time.Minute), 4, "file:///ckpt/job/chk-4")
	complete(t, c, at(13*time.Minute), 6)
	if st := c.Stats(); st.Counts != (Counts{Restored: 1, Total: 6, Completed: 5, Failed: 1}) || st.History[0].ID != 6 {
		t.Fatalf("after a new checkpoint: counts %+v, newest %d", st.Counts, st.History[0].ID)
	}
}
