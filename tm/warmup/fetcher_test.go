package warmup

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/tidestream/tide/core/checkpoint"
	"github.com/tidestream/tide/storage"
	"github.com/tidestream/tide/tm/localstate"
)

const job = "job-1"

// writeCheckpoint writes checkpoint n of vertex "map" with one file per subtask (files
// named in names, contents from content) and its _metadata, as the AM and subtasks do.
func writeCheckpoint(t *testing.T, st storage.Storage, n, attempt int64, names []string, content func(name string) []byte) {
	t.Helper()
	ctx := context.Background()
	done := checkpoint.Completed{ID: n, Attempt: attempt, Trigger: time.UnixMilli(1000 * n)}
	for i, name := range names {
		data := content(name)
		if _, err := st.Stat(ctx, name); err != nil {
			if err := storage.WriteFile(ctx, st, name, data); err != nil {
				t.Fatal(err)
			}
		}
		done.Handles = append(done.Handles, checkpoint.SubtaskState{Subtask: checkpoint.Subtask{Vertex: "map", Index: i},
			Handles: []checkpoint.StateHandle{{Name: name, Size: int64(len(data))}}})
	}
	data, err := checkpoint.EncodeMetadata(checkpoint.NewMetadata(job, done, map[string]int{"map": 8}, nil))
	if err != nil {
		t.Fatal(err)
	}
	if err := storage.WriteFile(ctx, st, checkpoint.MetadataPath(job, n), data); err != nil {
		t.Fatal(err)
	}
}

type reports struct {
	mu  sync.Mutex
	got []Progress
	ch  chan Progress
}

func (r *reports) report(p Progress) {
	r.mu.Lock()
	r.got = append(r.got, p)
	r.mu.Unlock()
	r.ch <- p
}

func (r *reports) next(t *testing.T) Progress {
	t.Helper()
	select {
	case p := <-r.ch:
		return p
	case <-time.After(time.Minute):
		t.Fatal("no warm-up report within a minute")
	}
	return Progress{}
}

func setup(t *testing.T) (storage.Storage, *localstate.Store, *Fetcher, *reports) {
	t.Helper()
	st, err := storage.Open(context.Background(), "file://"+t.TempDir(), storage.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	local, err := localstate.Open(t.TempDir(), nil)
	if err != nil {
		t.Fatal(err)
	}
	r := &reports{ch: make(chan Progress, 16)}
	f := New(Config{JobID: job, Storage: st, Local: local, Report: r.report})
	t.Cleanup(f.Close)
	return st, local, f, r
}

func content(name string) []byte { return bytes.Repeat([]byte(name), 100) }

// A copy fetches only the files of the writers whose ranges overlap its range, puts them
// in the local state under the checkpoint's key, and follows a newer checkpoint fetching
// only the files that changed (a file of the same name and size is linked).
func TestCopyFollowsCheckpointsAndFetchesOnlyWhatChanged(t *testing.T) {
	st, local, f, r := setup(t)
	names1 := []string{job + "/chk-1/map-0.state", job + "/shared/map-1-a.sst"}
	writeCheckpoint(t, st, 1, 1, names1, content)
	rng := Range{Vertex: "map", Start: 4, End: 5, SourceAttempt: 1, Sources: []Source{{0, 0, 3}, {1, 4, 7}}}
	f.Request(Request{Round: 7, Kind: "WARMUP", Checkpoint: 1, Ranges: []Range{rng}})
	p := r.next(t)
	want1 := int64(len(content(names1[1])))
	if p.Err != nil || p.Checkpoint != 1 || p.Bytes != want1 || p.Round != 7 || p.Start != 4 || p.End != 5 {
		t.Fatalf("report %+v, want checkpoint 1 with %d bytes (only subtask 1's file)", p, want1)
	}
	if _, ok := local.Find(job, "map", names1[0], int64(len(content(names1[0])))); ok {
		t.Errorf("subtask 0's file (key groups 0-3) was copied for range 4-5")
	}
	if path, ok := local.Find(job, "map", names1[1], want1); !ok {
		t.Errorf("subtask 1's file is not in the local state")
	} else if b, _ := os.ReadFile(path); !bytes.Equal(b, content(names1[1])) {
		t.Errorf("local copy of %s differs from the checkpoint's", names1[1])
	}

	// Checkpoint 2 lists the shared file again and a new one: only the new one travels.
	// Its confirmation (which reaches the TaskManager with the request to follow it) does
	// not delete checkpoint 1's copy, which the copy holds until it holds checkpoint 2.
	names2 := []string{job + "/chk-2/map-0.state", job + "/shared/map-1-a.sst"}
	writeCheckpoint(t, st, 2, 1, names2, content)
	local.Confirm(job, 2)
	rng2 := rng
	rng2.Sources = []Source{{0, 0, 4}, {1, 5, 7}} // now both writers overlap 4-5
	f.Request(Request{Round: 7, Kind: "WARMUP", Checkpoint: 2, Ranges: []Range{rng2}})
	p = r.next(t)
	want2 := want1 + int64(len(content(names2[0])))
	if p.Err != nil || p.Checkpoint != 2 || p.Bytes != want2 {
		t.Fatalf("report %+v, want checkpoint 2 with %d bytes in total (the shared file linked)", p, want2)
	}
	if got := local.Lookup(job, "map", 2, 4, 5); len(got) != 1 || len(got[0].Files) != 2 {
		t.Fatalf("local entries of checkpoint 2: %+v, want one with both files", got)
	}
	local.Confirm(job, 3)
	if got := local.Lookup(job, "map", 2, 4, 5); len(got) != 1 {
		t.Fatalf("the copy's entry of checkpoint 2 is gone after Confirm(3) while the copy runs")
	}
	if got := local.Lookup(job, "map", 1, 4, 5); len(got) != 0 {
		t.Fatalf("checkpoint 1's entry survives Confirm(3) after the copy moved on: %+v", got)
	}
	f.Close() // the copies end and release what they hold
	local.Confirm(job, 3)
	if got := local.Lookup(job, "map", 2, 4, 5); len(got) != 0 {
		t.Fatalf("checkpoint 2's entry survives Confirm(3) after the copy stopped: %+v", got)
	}
}

// Unknown writers (no sources, or another attempt wrote the checkpoint): every file of the
// vertex is copied.
func TestCopyWithoutSourcesTakesEveryFileOfTheVertex(t *testing.T) {
	st, local, f, r := setup(t)
	names := []string{job + "/chk-3/map-0.state", job + "/chk-3/map-1.state"}
	writeCheckpoint(t, st, 3, 2, names, content)
	f.Request(Request{Round: 1, Kind: "STANDBY", Checkpoint: 3, Ranges: []Range{
		{Vertex: "map", Start: 0, End: 3, SourceAttempt: 1, Sources: []Source{{0, 0, 3}, {1, 4, 7}}}}})
	if p := r.next(t); p.Err != nil || p.Checkpoint != 3 {
		t.Fatalf("report %+v", p)
	}
	for _, n := range names {
		if _, ok := local.Find(job, "map", n, int64(len(content(n)))); !ok {
			t.Errorf("%s not copied", n)
		}
	}
}

// A copy that cannot fetch (the checkpoint is gone, and no newer one is asked for within
// subsumedWait) reports the error and keeps nothing;
// a later checkpoint that is there succeeds.
func TestCopyErrorIsReportedAndALaterCheckpointRecovers(t *testing.T) {
	st, local, f, r := setup(t)
	f.Request(Request{Round: 2, Checkpoint: 4, Ranges: []Range{{Vertex: "map", Start: 0, End: 7}}})
	p := r.next(t)
	if p.Err == nil || p.Checkpoint != 0 || !strings.Contains(p.Err.Error(), "checkpoint 4") {
		t.Fatalf("report %+v, want an error naming checkpoint 4 and nothing held", p)
	}
	if got := local.Lookup(job, "map", 4, 0, 7); len(got) != 0 {
		t.Fatalf("failed copy left entries: %+v", got)
	}
	writeCheckpoint(t, st, 5, 1, []string{job + "/chk-5/map-0.state"}, content)
	f.Request(Request{Round: 2, Checkpoint: 5, Ranges: []Range{{Vertex: "map", Start: 0, End: 7}}})
	if p := r.next(t); p.Err != nil || p.Checkpoint != 5 {
		t.Fatalf("report %+v, want checkpoint 5", p)
	}
}

// A checkpoint whose own files are deleted while the copy reads them (a newer one
// completed and subsumed it) is not a failure: the copy follows the newer checkpoint the
// AM asks for next and reports only that.
func TestCopyOfASubsumedCheckpointFollowsTheNewerOne(t *testing.T) {
	st, _, f, r := setup(t)
	writeCheckpoint(t, st, 3, 1, []string{job + "/chk-3/map-0.state"}, content)
	if err := st.Delete(context.Background(), job+"/chk-3/map-0.state"); err != nil {
		t.Fatal(err)
	}
	writeCheckpoint(t, st, 4, 1, []string{job + "/chk-4/map-0.state"}, content)
	rng := Range{Vertex: "map", Start: 0, End: 7}
	f.Request(Request{Round: 5, Checkpoint: 3, Ranges: []Range{rng}})
	f.Request(Request{Round: 5, Checkpoint: 4, Ranges: []Range{rng}})
	if p := r.next(t); p.Err != nil || p.Checkpoint != 4 {
		t.Fatalf("report %+v, want checkpoint 4 held and no error", p)
	}
}

// A file whose size differs from what _metadata records is an error, not a bad copy.
func TestCopyRejectsAFileOfTheWrongSize(t *testing.T) {
	st, _, f, r := setup(t)
	name := job + "/chk-6/map-0.state"
	writeCheckpoint(t, st, 6, 1, []string{name}, content)
	if err := storage.WriteFile(context.Background(), st, name, []byte("short")); err != nil {
		t.Fatal(err)
	}
	f.Request(Request{Round: 3, Checkpoint: 6, Ranges: []Range{{Vertex: "map", Start: 0, End: 7}}})
	p := r.next(t)
	if p.Err == nil || !strings.Contains(p.Err.Error(), fmt.Sprintf("_metadata records %d", len(content(name)))) {
		t.Fatalf("report %+v, want a size mismatch", p)
	}
}

// Stop ends a round: no more reports for it, even for a newer checkpoint.
func TestStopEndsTheRound(t *testing.T) {
	st, _, f, r := setup(t)
	writeCheckpoint(t, st, 1, 1, []string{job + "/chk-1/map-0.state"}, content)
	f.Request(Request{Round: 9, Checkpoint: 1, Ranges: []Range{{Vertex: "map", Start: 0, End: 7}}})
	r.next(t)
	f.Stop(9)
	f.Request(Request{Round: 10, Checkpoint: 1, Ranges: []Range{{Vertex: "map", Start: 0, End: 3}}})
	if p := r.next(t); p.Round != 10 {
		t.Fatalf("report %+v after round 9 stopped, want round 10's", p)
	}
}

// Without a local state store nothing would restore from a copy: it fails at once.
func TestCopyWithoutLocalStateFails(t *testing.T) {
	st, err := storage.Open(context.Background(), "file://"+t.TempDir(), storage.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	r := &reports{ch: make(chan Progress, 4)}
	f := New(Config{JobID: job, Storage: st, Report: r.report})
	defer f.Close()
	f.Request(Request{Round: 1, Checkpoint: 1, Ranges: []Range{{Vertex: "map", Start: 0, End: 7}}})
	if p := r.next(t); p.Err == nil || !strings.Contains(p.Err.Error(), "state.backend.local-recovery") {
		t.Fatalf("report %+v, want an error naming state.backend.local-recovery", p)
	}
}
