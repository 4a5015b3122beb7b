package am

import (
	"context"
	"errors"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/tidestream/tide/core"
	"github.com/tidestream/tide/core/blocklist"
	"github.com/tidestream/tide/core/checkpoint"
	"github.com/tidestream/tide/storage"
)

func sampleAMState() amState {
	t0 := time.Date(2026, 12, 1, 9, 0, 0, 0, time.UTC)
	return amState{
		JobID: testJobID, StartTime: t0,
		Blocklist: []blocklist.BlockedNode{
			{ID: "n1", Action: blocklist.MarkBlocked, Start: t0, End: t0.Add(30 * time.Minute), Cause: "bad disk"},
			{ID: "n2", Action: blocklist.MarkBlockedAndEvacuate, Start: t0, Cause: "retired"},
		},
		Rescales:    []core.Rescale{{ID: 1, Trigger: core.TriggerInitialSchedule, Start: t0, End: t0.Add(time.Second), Outcome: core.RescaleCompleted}},
		Exceptions:  []core.ExceptionEntry{{Time: t0, Attempt: 2, Subtask: "map (1/2)", Error: "boom"}},
		Checkpoints: checkpoint.Stats{Counts: checkpoint.Counts{Total: 9, Completed: 8, Failed: 1}},
	}
}

func TestAMStateRoundTrip(t *testing.T) {
	want := sampleAMState()
	data, err := encodeAMState(want)
	if err != nil {
		t.Fatal(err)
	}
	got, err := decodeAMState(data, testJobID, "file:///x/_am_state")
	if err != nil {
		t.Fatal(err)
	}
	if !got.StartTime.Equal(want.StartTime) || len(got.Blocklist) != 2 || !got.Blocklist[0].Equal(want.Blocklist[0]) ||
		!got.Blocklist[1].Equal(want.Blocklist[1]) || !got.Blocklist[1].Permanent() ||
		got.Rescales[0].ID != 1 || got.Exceptions[0].Error != "boom" || got.Checkpoints.Counts != want.Checkpoints.Counts {
		t.Fatalf("round trip: got %+v, want %+v", got, want)
	}
}

func TestDecodeAMStateRefusals(t *testing.T) {
	tests := []struct {
		name, data, want string
	}{
		{"not JSON", `{"version":`, "unexpected end"},
		{"other version", `{"version":2,"job_id":"` + testJobID + `","start_time":"2026-12-01T09:00:00Z"}`, "version 2"},
		{"other job", `{"version":1,"job_id":"ffff","start_time":"2026-12-01T09:00:00Z"}`, `job_id "ffff"`},
		{"no start", `{"version":1,"job_id":"` + testJobID + `"}`, "start_time missing"},
		{"bad node", `{"version":1,"job_id":"` + testJobID + `","start_time":"2026-12-01T09:00:00Z","blocklist":[{"ID":"n9","Action":"NOPE","Start":"2026-12-01T09:00:00Z"}]}`, `blocklist[0] (node "n9")`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := decodeAMState([]byte(tt.data), testJobID, "file:///x/_am_state")
			if !errors.Is(err, ErrAMState) || !strings.Contains(err.Error(), tt.want) || !strings.Contains(err.Error(), "file:///x/_am_state") {
				t.Fatalf("decode = %v, want ErrAMState naming the file and %q", err, tt.want)
			}
		})
	}
}

func FuzzDecodeAMState(f *testing.F) {
	data, _ := encodeAMState(sampleAMState())
	f.Add(data)
	f.Add([]byte(`{"version":1}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		s, err := decodeAMState(data, testJobID, "fuzz")
		if err != nil {
			return
		}
		again, err := encodeAMState(s)
		if err != nil {
			t.Fatalf("a decoded state does not encode: %v", err)
		}
		if _, err := decodeAMState(again, testJobID, "fuzz"); err != nil {
			t.Fatalf("a re-encoded state does not decode: %v", err)
		}
	})
}

// failingCommits fails the first n commits.
type failingCommits struct {
	storage.Storage
	n int
}

func (f *failingCommits) Create(ctx context.Context, name string) (storage.Writer, error) {
	w, err := f.Storage.Create(ctx, name)
	if err != nil {
		return nil, err
	}
	if f.n > 0 {
		f.n--
		_ = w.Abort(ctx)
		return nil, errors.New("namenode unavailable")
	}
	return w, nil
}

// A failed write is reported to whoever waits for it and retried until it lands; a
// damaged file is moved aside, not overwritten unseen.
func TestAMStateStoreRetriesAndMovesDamagedAside(t *testing.T) {
	old := amStateRetry
	amStateRetry.first, amStateRetry.max = time.Millisecond, 10*time.Millisecond
	defer func() { amStateRetry = old }()
	ctx := context.Background()
	local, err := storage.Open(ctx, "file://"+t.TempDir(), storage.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer local.Close()
	st := &failingCommits{Storage: local, n: 2}
	p := newAMStateStore(st, testJobID, slog.New(slog.DiscardHandler))
	stop := make(chan struct{})
	done := make(chan struct{})
	go func() { defer close(done); p.run(stop) }()
	v := p.save(sampleAMState())
	if err := p.wait(ctx, v); err == nil || !strings.Contains(err.Error(), "namenode unavailable") {
		t.Fatalf("wait after a failed write = %v, want the write's error", err)
	}
	wctx, cancel := context.WithTimeout(ctx, time.Minute)
	defer cancel()
	for p.wait(wctx, v) != nil && wctx.Err() == nil {
		time.Sleep(time.Millisecond)
	}
	close(stop)
	<-done
	got, ok, err := p.load(ctx, testJobID)
	if err != nil || !ok || got.Blocklist[0].ID != "n1" {
		t.Fatalf("load = %+v %v %v", got, ok, err)
	}
	if err := storage.WriteFile(ctx, local, testJobID+"/"+amStateFile, []byte("{garbage")); err != nil {
		t.Fatal(err)
	}
	if _, ok, err := p.load(ctx, testJobID); ok || !errors.Is(err, ErrAMState) || !strings.Contains(err.Error(), ".damaged") {
		t.Fatalf("load of a damaged file = %v %v, want ErrAMState naming the .damaged copy", ok, err)
	}
	if _, err := local.Stat(ctx, testJobID+"/"+amStateFile+".damaged"); err != nil {
		t.Fatalf("damaged file not kept: %v", err)
	}
}
