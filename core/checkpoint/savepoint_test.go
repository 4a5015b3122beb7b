package checkpoint

import (
	"errors"
	"strings"
	"testing"
	"time"
)

// ackAll acknowledges checkpoint id for every subtask of all and returns the completion.
func ackAll(t *testing.T, c *Coordinator, now time.Time, attempt, id int64) Completed {
	t.Helper()
	var done *Completed
	var err error
	for _, s := range all {
		if done, err = c.Ack(now, attempt, id, s, []StateHandle{{Name: s.String(), Size: 10}}); err != nil {
			t.Fatalf("Ack %s: %v", s, err)
		}
	}
	if done == nil {
		t.Fatalf("checkpoint %d not complete after every ack", id)
	}
	return *done
}

// A savepoint takes the next id, shows in the history as SAVEPOINT and as
// latest.savepoint, and is neither retained nor the latest checkpoint: the checkpoints
// around it keep their retention, as if it had not happened.
func TestSavepointSharesIDsButIsNotRetained(t *testing.T) {
	c := newCoord(t, func(cfg *Config) { cfg.NumRetained = 1; cfg.MinPause = time.Hour })
	id1, _ := complete(t, c, at(0), 1)
	// Savepoints ignore the minimum pause.
	sp, err := c.TriggerSavepoint(at(time.Second), 1, all, FormatCanonical)
	if err != nil || sp != id1+1 {
		t.Fatalf("TriggerSavepoint = %d, %v; want %d", sp, err, id1+1)
	}
	if id, opts, ok := c.Pending(); !ok || id != sp || !opts.IsSavepoint() || opts.Format != FormatCanonical {
		t.Fatalf("Pending = %d %+v %v", id, opts, ok)
	}
	done := ackAll(t, c, at(2*time.Second), 1, sp)
	if !done.Options.IsSavepoint() {
		t.Fatalf("completed savepoint lost its options: %+v", done.Options)
	}
	discard, err := c.Finalized(at(3*time.Second), sp)
	if err != nil || len(discard) != 0 {
		t.Fatalf("Finalized(savepoint) = %v, %v; want nothing to delete", discard, err)
	}
	if latest, _ := c.Latest(); latest != id1 {
		t.Errorf("Latest = %d after a savepoint; want checkpoint %d (a savepoint is never the restore point)", latest, id1)
	}
	if got := c.Retained(); len(got) != 1 || got[0] != id1 {
		t.Errorf("Retained = %v; want [%d]", got, id1)
	}
	// The minimum pause still counts from checkpoint 1, not from the savepoint.
	if got := c.EarliestTrigger(); !got.Equal(at(time.Hour)) {
		t.Errorf("EarliestTrigger = %v; want %v", got, at(time.Hour))
	}
	st := c.Stats()
	if st.Latest.Completed == nil || st.Latest.Completed.ID != id1 {
		t.Errorf("latest.completed = %+v; want checkpoint %d", st.Latest.Completed, id1)
	}
	if s := st.Latest.Savepoint; s == nil || s.ID != sp || s.CheckpointType != TypeSavepoint || s.SavepointFormat != FormatCanonical {
		t.Errorf("latest.savepoint = %+v; want savepoint %d CANONICAL", s, sp)
	}
	if st.Counts.Completed != 2 || st.Counts.Total != 2 {
		t.Errorf("counts = %+v; want the savepoint counted with the checkpoints", st.Counts)
	}
	if h := st.History[0]; h.ID != sp || h.CheckpointType != TypeSavepoint || h.Status != StatusCompleted {
		t.Errorf("history[0] = %+v", h)
	}
	if h := st.History[1]; h.ID != id1 || h.CheckpointType != TypeCheckpoint {
		t.Errorf("history[1] = %+v", h)
	}
	// The next checkpoint subsumes checkpoint 1 only.
	id3, discard := complete(t, c, at(2*time.Hour), 1)
	if id3 != sp+1 || len(discard) != 1 || discard[0] != id1 {
		t.Errorf("next checkpoint %d discards %v; want %d discarding [%d]", id3, discard, sp+1, id1)
	}
}

// A savepoint is refused like a checkpoint while one is in flight, and its failure
// carries its options (the AM does not count it against tolerable failures).
func TestSavepointInFlightAndFailure(t *testing.T) {
	c := newCoord(t, nil)
	id, err := c.Trigger(at(0), 1, all)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c.TriggerSavepoint(at(time.Second), 1, all, FormatCanonical); !errors.Is(err, ErrInFlight) {
		t.Fatalf("TriggerSavepoint during checkpoint %d: %v; want ErrInFlight", id, err)
	}
	ackAll(t, c, at(time.Second), 1, id)
	if _, err := c.Finalized(at(time.Second), id); err != nil {
		t.Fatal(err)
	}
	sp, err := c.TriggerSavepoint(at(2*time.Second), 1, all, "")
	if err != nil {
		t.Fatal(err)
	}
	if _, opts, _ := c.Pending(); opts.Format != FormatCanonical {
		t.Errorf("default format = %q; want CANONICAL", opts.Format)
	}
	f, err := c.Decline(at(3*time.Second), 1, sp, src0, "disk full")
	if err != nil || !f.Options.IsSavepoint() {
		t.Fatalf("Decline = %+v, %v; want a failed savepoint", f, err)
	}
	if st := c.Stats(); st.Latest.Failed == nil || st.Latest.Failed.CheckpointType != TypeSavepoint {
		t.Errorf("latest.failed = %+v; want the savepoint", st.Latest.Failed)
	}
}

func TestParseFormatType(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want FormatType
		err  bool
	}{
		{"", FormatCanonical, false},
		{"canonical", FormatCanonical, false},
		{"NATIVE", FormatNative, false},
		{" Native ", FormatNative, false},
		{"FULL", "", true},
	} {
		got, err := ParseFormatType(tc.in)
		if (err != nil) != tc.err || got != tc.want {
			t.Errorf("ParseFormatType(%q) = %q, %v", tc.in, got, err)
		}
		if err != nil && (!strings.Contains(err.Error(), "formatType") || !strings.Contains(err.Error(), "CANONICAL or NATIVE")) {
			t.Errorf("error %q does not name the key and the expected values", err)
		}
	}
}

// Statistics an older AM persisted have no checkpoint_type: their entries are checkpoints.
func TestHistoryEntryType(t *testing.T) {
	for _, tc := range []struct {
		in, want Type
	}{{"", TypeCheckpoint}, {TypeCheckpoint, TypeCheckpoint}, {TypeSavepoint, TypeSavepoint}} {
		if got := (HistoryEntry{CheckpointType: tc.in}).Type(); got != tc.want {
			t.Errorf("HistoryEntry{CheckpointType: %q}.Type() = %q; want %q", tc.in, got, tc.want)
		}
	}
}
