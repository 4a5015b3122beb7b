package checkpoint

import (
	"errors"
	"slices"
	"strings"
	"testing"
	"time"
)

var t0 = time.Date(2024, 3, 1, 12, 0, 0, 0, time.UTC)

func at(d time.Duration) time.Time { return t0.Add(d) }

var (
	src0 = Subtask{"source", 0}
	src1 = Subtask{"source", 1}
	map0 = Subtask{"map", 0}
	all  = []Subtask{src0, src1, map0}
)

func newCoord(t *testing.T, mod func(*Config)) *Coordinator {
	t.Helper()
	cfg := DefaultConfig()
	cfg.Timeout = time.Minute
	if mod != nil {
		mod(&cfg)
	}
	c, err := NewCoordinator(cfg, 1)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// complete runs one checkpoint of attempt to finalization and returns the ids to delete.
func complete(t *testing.T, c *Coordinator, now time.Time, attempt int64) (int64, []int64) {
	t.Helper()
	id, err := c.Trigger(now, attempt, all)
	if err != nil {
		t.Fatalf("Trigger: %v", err)
	}
	var done *Completed
	for _, s := range all {
		if done, err = c.Ack(now, attempt, id, s, []StateHandle{{Name: s.String(), Size: 10}}); err != nil {
			t.Fatalf("Ack %s: %v", s, err)
		}
	}
	if done == nil {
		t.Fatalf("checkpoint %d not complete after every ack", id)
	}
	discard, err := c.Finalized(now, id)
	if err != nil {
		t.Fatalf("Finalized: %v", err)
	}
	return id, discard
}

func TestAckCompletes(t *testing.T) {
	c := newCoord(t, nil)
	id, err := c.Trigger(at(0), 1, all)
	if err != nil || id != 1 {
		t.Fatalf("Trigger = %d, %v", id, err)
	}
	acks := []struct {
		at      time.Duration
		subtask Subtask
		handles []StateHandle
		wantErr error
	}{
		{time.Second, map0, []StateHandle{{"map-0/keyed", 100}, {"map-0/op", 5}}, nil},
		{2 * time.Second, map0, nil, ErrDuplicateAck},
		{2 * time.Second, Subtask{"sink", 0}, nil, ErrUnexpectedSubtask},
		{3 * time.Second, src1, []StateHandle{{"source-1", 7}}, nil},
		{4 * time.Second, src0, nil, nil},
	}
	var done *Completed
	for i, a := range acks {
		done, err = c.Ack(at(a.at), 1, id, a.subtask, a.handles)
		if !errors.Is(err, a.wantErr) || (a.wantErr == nil && err != nil) {
			t.Fatalf("ack %d: err = %v, want %v", i, err, a.wantErr)
		}
		if i < len(acks)-1 && done != nil {
			t.Fatalf("ack %d: completed early", i)
		}
	}
	if done == nil {
		t.Fatal("last ack did not complete the checkpoint")
	}
	want := Completed{ID: 1, Attempt: 1, Trigger: at(0), Duration: 4 * time.Second, Size: 112, Handles: []SubtaskState{
		{map0, []StateHandle{{"map-0/keyed", 100}, {"map-0/op", 5}}},
		{src0, []StateHandle{}},
		{src1, []StateHandle{{"source-1", 7}}},
	}}
	if done.ID != want.ID || done.Attempt != want.Attempt || done.Duration != want.Duration || done.Size != want.Size || !slices.EqualFunc(done.Handles, want.Handles, func(a, b SubtaskState) bool {
		return a.Subtask == b.Subtask && slices.Equal(a.Handles, b.Handles)
	}) {
		t.Fatalf("Completed = %+v\nwant %+v", *done, want)
	}
	if _, ok := c.Latest(); ok {
		t.Fatal("Latest before Finalized")
	}
	if _, err := c.Trigger(at(5*time.Second), 1, all); !errors.Is(err, ErrInFlight) {
		t.Fatalf("Trigger while finalizing = %v, want ErrInFlight", err)
	}
	if discard, err := c.Finalized(at(5*time.Second), 1); err != nil || len(discard) != 0 {
		t.Fatalf("Finalized = %v, %v", discard, err)
	}
	if latest, ok := c.Latest(); !ok || latest != 1 {
		t.Fatalf("Latest = %d, %v", latest, ok)
	}
	if _, err := c.Finalized(at(5*time.Second), 1); !errors.Is(err, ErrUnknownCheckpoint) {
		t.Fatalf("second Finalized = %v", err)
	}
}

func TestTriggerRefusals(t *testing.T) {
	c := newCoord(t, func(cfg *Config) { cfg.MinPause = 10 * time.Second })
	if _, err := c.Trigger(at(0), 1, nil); !errors.Is(err, ErrNoSubtasks) {
		t.Fatalf("Trigger without subtasks = %v", err)
	}
	complete(t, c, at(0), 1)
	_, err := c.Trigger(at(5*time.Second), 1, all)
	var early *TooEarlyError
	if !errors.As(err, &early) || !errors.Is(err, ErrMinPause) || !early.Until.Equal(at(10*time.Second)) {
		t.Fatalf("Trigger within min pause = %v", err)
	}
	id, err := c.Trigger(at(10*time.Second), 1, all)
	if err != nil || id != 2 {
		t.Fatalf("Trigger after min pause = %d, %v", id, err)
	}
	if _, err := c.Trigger(at(11*time.Second), 1, all); !errors.Is(err, ErrInFlight) || !strings.Contains(err.Error(), "checkpoint 2") {
		t.Fatalf("second Trigger = %v, want ErrInFlight naming checkpoint 2", err)
	}
	if _, err := c.Trigger(at(11*time.Second), 0, all); !errors.Is(err, ErrStaleAttempt) {
		t.Fatalf("Trigger for old attempt = %v", err)
	}
}

func TestDeclineTimeoutAndAttempts(t *testing.T) {
	c := newCoord(t, nil)
	id, _ := c.Trigger(at(0), 1, all)
	if _, err := c.Decline(at(time.Second), 1, id+1, src0, "x"); !errors.Is(err, ErrUnknownCheckpoint) {
		t.Fatalf("Decline of unknown id = %v", err)
	}
	f, err := c.Decline(at(time.Second), 1, id, src0, "disk full")
	if err != nil || f.ID != id || !strings.Contains(f.Reason, "source#0") || !strings.Contains(f.Reason, "disk full") {
		t.Fatalf("Decline = %+v, %v", f, err)
	}
	if _, err := c.Ack(at(2*time.Second), 1, id, src1, nil); !errors.Is(err, ErrUnknownCheckpoint) {
		t.Fatalf("Ack after decline = %v", err)
	}

	id2, _ := c.Trigger(at(10*time.Second), 1, all)
	c.Ack(at(11*time.Second), 1, id2, src0, nil)
	if next, ok := c.NextTimeout(); !ok || !next.Equal(at(70*time.Second)) {
		t.Fatalf("NextTimeout = %v, %v", next, ok)
	}
	if got := c.Timeout(at(69 * time.Second)); len(got) != 0 {
		t.Fatalf("Timeout early = %v", got)
	}
	got := c.Timeout(at(70 * time.Second))
	if len(got) != 1 || got[0].ID != id2 || !strings.Contains(got[0].Reason, "2 of 3") || !strings.Contains(got[0].Reason, "map#0") {
		t.Fatalf("Timeout = %+v", got)
	}

	id3, _ := c.Trigger(at(80*time.Second), 1, all)
	failed := c.NewAttempt(at(81*time.Second), 2)
	if len(failed) != 1 || failed[0].ID != id3 || failed[0].Attempt != 1 {
		t.Fatalf("NewAttempt = %+v", failed)
	}
	if _, err := c.Ack(at(82*time.Second), 1, id3, src0, nil); !errors.Is(err, ErrStaleAttempt) {
		t.Fatalf("Ack of old attempt = %v", err)
	}
	if got := c.NewAttempt(at(83*time.Second), 2); got != nil {
		t.Fatalf("NewAttempt with same attempt = %v", got)
	}
	// A trigger for a newer attempt aborts the pending one of the older attempt.
	id4, _ := c.Trigger(at(90*time.Second), 2, all)
	if _, err := c.Trigger(at(91*time.Second), 3, all); err != nil {
		t.Fatalf("Trigger for attempt 3 = %v", err)
	}
	st := c.Stats()
	if st.Counts.Failed != 4 || st.Counts.Total != 5 || st.Counts.InProgress != 1 || st.Counts.Completed != 0 {
		t.Fatalf("counts = %+v", st.Counts)
	}
	if st.Latest.Failed == nil || st.Latest.Failed.ID != id4 {
		t.Fatalf("latest failed = %+v", st.Latest.Failed)
	}
	if ids := []int64{id, id2, id3, id4}; !slices.Equal(ids, []int64{1, 2, 3, 4}) {
		t.Fatalf("ids = %v, want 1..4", ids)
	}
}

func TestRetention(t *testing.T) {
	tests := []struct {
		name        string
		numRetained int
		adopt       []int64
		highest     int64
		wantAdopt   []int64
		runs        int
		wantDiscard [][]int64
		wantKept    []int64
	}{
		{"keep one", 1, nil, 0, nil, 3, [][]int64{nil, {1}, {2}}, []int64{3}},
		{"keep two", 2, nil, 0, nil, 3, [][]int64{nil, nil, {1}}, []int64{2, 3}},
		{"adopt old ones", 2, []int64{4, 7, 5}, 9, []int64{4}, 2, [][]int64{{5}, {7}}, []int64{10, 11}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := newCoord(t, func(cfg *Config) { cfg.NumRetained = tt.numRetained })
			if got := c.Adopt(tt.adopt, tt.highest); !slices.Equal(got, tt.wantAdopt) {
				t.Fatalf("Adopt = %v, want %v", got, tt.wantAdopt)
			}
			for i := range tt.runs {
				_, discard := complete(t, c, at(time.Duration(i)*time.Minute), 1)
				if !slices.Equal(discard, tt.wantDiscard[i]) {
					t.Errorf("run %d: discard = %v, want %v", i, discard, tt.wantDiscard[i])
				}
			}
			if got := c.Retained(); !slices.Equal(got, tt.wantKept) {
				t.Errorf("Retained = %v, want %v", got, tt.wantKept)
			}
		})
	}
}

func TestSetConfigShrinksRetention(t *testing.T) {
	c := newCoord(t, func(cfg *Config) { cfg.NumRetained = 3 })
	for i := range 3 {
		complete(t, c, at(time.Duration(i)*time.Minute), 1)
	}
	cfg := c.Config()
	cfg.NumRetained = 1
	discard, err := c.SetConfig(cfg)
	if err != nil || !slices.Equal(discard, []int64{1, 2}) {
		t.Fatalf("SetConfig = %v, %v", discard, err)
	}
	cfg.Timeout = 0
	if _, err := c.SetConfig(cfg); !errors.Is(err, ErrInvalidConfig) {
		t.Fatalf("SetConfig(invalid) = %v", err)
	}
}

func TestStatsHistoryBoundedAcrossAttempts(t *testing.T) {
	c := newCoord(t, func(cfg *Config) { cfg.HistorySize = 3 })
	c.Restored(at(0), 7, "hdfs://nn/ckpt/job/chk-7")
	for i := range 4 {
		complete(t, c, at(time.Duration(i)*time.Minute), int64(i+1))
	}
	id, _ := c.Trigger(at(10*time.Minute), 5, all)
	c.Ack(at(10*time.Minute+time.Second), 5, id, src0, []StateHandle{{"a", 3}})
	if _, err := c.FinalizeFailed(at(0), 99, "x"); !errors.Is(err, ErrUnknownCheckpoint) {
		t.Fatalf("FinalizeFailed of unknown = %v", err)
	}
	st := c.Stats()
	if got := []int64{st.History[0].ID, st.History[1].ID, st.History[2].ID}; len(st.History) != 3 || !slices.Equal(got, []int64{5, 4, 3}) {
		t.Fatalf("history ids = %v (len %d), want [5 4 3]", got, len(st.History))
	}
	h := st.History[0]
	if h.Status != StatusInProgress || h.NumAcknowledgedSubtasks != 1 || h.NumSubtasks != 3 || h.StateSize != 3 || h.EndToEndDuration != 1000 {
		t.Fatalf("in-progress entry = %+v", h)
	}
	if st.History[1].Status != StatusCompleted || st.History[1].StateSize != 30 || st.History[1].Attempt != 4 {
		t.Fatalf("completed entry = %+v", st.History[1])
	}
	want := Counts{Restored: 1, Total: 5, InProgress: 1, Completed: 4, Failed: 0}
	if st.Counts != want {
		t.Fatalf("counts = %+v, want %+v", st.Counts, want)
	}
	if st.Latest.Completed == nil || st.Latest.Completed.ID != 4 || st.Latest.Restored == nil || st.Latest.Restored.ID != 7 {
		t.Fatalf("latest = %+v", st.Latest)
	}
}

func TestFinalizeFailed(t *testing.T) {
	c := newCoord(t, nil)
	id, _ := c.Trigger(at(0), 1, []Subtask{src0})
	if done, err := c.Ack(at(time.Second), 1, id, src0, nil); err != nil || done == nil {
		t.Fatalf("Ack = %v, %v", done, err)
	}
	f, err := c.FinalizeFailed(at(2*time.Second), id, "hdfs down")
	if err != nil || f.ID != id || !strings.Contains(f.Reason, "hdfs down") {
		t.Fatalf("FinalizeFailed = %+v, %v", f, err)
	}
	if _, ok := c.Latest(); ok {
		t.Fatal("a checkpoint without _metadata became the latest")
	}
	if _, err := c.Trigger(at(3*time.Second), 1, all); err != nil {
		t.Fatalf("Trigger after failed finalize = %v", err)
	}
}

func TestConfigValidate(t *testing.T) {
	bad := Config{Timeout: 0, MinPause: -1, NumRetained: 0, HistorySize: -1}
	err := bad.Validate()
	for _, w := range []string{"timeout 0s", "min-pause -1ns", "num-retained 0", "history -1"} {
		if err == nil || !strings.Contains(err.Error(), w) {
			t.Errorf("Validate = %v, want mention of %q", err, w)
		}
	}
	if _, err := NewCoordinator(DefaultConfig(), 0); err == nil {
		t.Error("NewCoordinator accepted first id 0")
	}
}
