package am

import (
	"context"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/tidestream/tide/core"
	"github.com/tidestream/tide/core/source"
	"github.com/tidestream/tide/storage"
	"github.com/tidestream/tide/stream"
)

// readSplitLog decodes the split-assignment log of vertex v as it is on disk.
func readSplitLog(t *testing.T, st storage.Storage, job string, v core.VertexID) []source.Entry {
	t.Helper()
	data, err := storage.ReadFile(context.Background(), st, splitLogName(job, v))
	if err != nil {
		t.Fatal(err)
	}
	entries, truncated, err := source.DecodeLog(data)
	if err != nil || truncated {
		t.Fatalf("split log: truncated %v, err %v", truncated, err)
	}
	return entries
}

// newNumbersCoordinator is a source coordinator over one NumberSequence source (split
// into 4 ranges) with its log in st; posted callbacks arrive on the returned channel.
func newNumbersCoordinator(t *testing.T, st storage.Storage) (*sourceCoordinator, core.VertexID, chan func()) {
	t.Helper()
	job := stream.NewJob("numbers", 2, 8)
	nums := stream.NumberSequenceSource(job, "numbers", stream.NumberSequence{From: 1, To: 100, Splits: 4})
	stream.Print(nums, "print", io.Discard)
	srcs := job.Sources()
	if len(srcs) != 1 {
		t.Fatalf("sources %v", srcs)
	}
	posts := make(chan func(), 100)
	sc := newSourceCoordinator(job, slog.New(slog.DiscardHandler))
	sc.open(context.Background(), st, recoverJobID, func(f func()) bool { posts <- f; return true })
	t.Cleanup(sc.stop)
	return sc, core.VertexID(srcs[0].Vertex), posts
}

// assign requests a split for subtask index and waits until it is durable.
func assign(t *testing.T, sc *sourceCoordinator, posts chan func(), attempt core.AttemptID, v core.VertexID, index int) ([]stream.Split, bool) {
	t.Helper()
	splits, noMore, ok, err := sc.request(attempt, v, index)
	if err != nil || !ok {
		t.Fatalf("request: ok %v, err %v", ok, err)
	}
	durable := make(chan error, 1)
	sc.persist(v, func(err error) { durable <- err })
	for {
		select {
		case f := <-posts:
			f()
		case err := <-durable:
			if err != nil {
				t.Fatal(err)
			}
			return splits, noMore
		case <-time.After(time.Minute):
			t.Fatal("log write never became durable")
		}
	}
}

// settle runs posted callbacks until the writer has been idle for a moment.
func settle(posts chan func()) {
	for {
		select {
		case f := <-posts:
			f()
		case <-time.After(200 * time.Millisecond):
			return
		}
	}
}

// A new AM process replays the log: it knows what was handed out since the last
// completed checkpoint, resets those readers to the checkpoint it restores, and the
// restored enumerator hands every split not covered by the checkpoint out exactly once.
func TestSplitLogCompactsAndReplaysAcrossAMs(t *testing.T) {
	backends(t, testSplitLogCompactsAndReplays)
}

func testSplitLogCompactsAndReplays(t *testing.T, st storage.Storage) {
	sc, v, posts := newNumbersCoordinator(t, st)
	if err := sc.reset(1, map[core.VertexID]int{v: 2}, nil, 0); err != nil {
		t.Fatal(err)
	}
	before, _ := assign(t, sc, posts, 1, v, 0)
	state, err := sc.snapshot(1)
	if err != nil {
		t.Fatal(err)
	}
	sc.notifyComplete(1)
	settle(posts)
	if es := readSplitLog(t, st, recoverJobID, v); len(es) != 1 || es[0].Kind != source.KindState || es[0].State.LastComplete != 1 {
		t.Fatalf("log after checkpoint 1: %+v, want one compacted state entry", es)
	}
	after, _ := assign(t, sc, posts, 1, v, 1)

	// The AM dies here. The next one replays the log.
	sc2, _, posts2 := newNumbersCoordinator(t, st)
	un := sc2.trackers[v].Uncheckpointed()
	if len(un) != 1 || un[0].Subtask != 1 || len(un[0].Splits) != 1 || un[0].Splits[0].ID != after[0].ID {
		t.Fatalf("replayed uncheckpointed assignments %+v, want %s on subtask 1", un, after[0].ID)
	}
	if err := sc2.reset(2, map[core.VertexID]int{v: 2}, state, 1); err != nil {
		t.Fatal(err)
	}
	if un := sc2.trackers[v].Uncheckpointed(); len(un) != 0 {
		t.Fatalf("after reset to checkpoint 1: uncheckpointed %+v", un)
	}
	seen := map[string]int{}
	for _, s := range before {
		seen[s.ID]++
	}
	for i := 0; ; i++ {
		splits, noMore := assign(t, sc2, posts2, 2, v, i%2)
		for _, s := range splits {
			seen[s.ID]++
		}
		if noMore {
			if _, noMore := assign(t, sc2, posts2, 2, v, (i+1)%2); !noMore {
				continue
			}
			break
		}
	}
	if len(seen) != 4 {
		t.Fatalf("splits handed out %v, want the 4 ranges", seen)
	}
	for id, n := range seen {
		if n != 1 {
			t.Errorf("split %s handed out %d times", id, n)
		}
	}
}

// A log that does not decode is kept aside, named in the AM's error, and the source
// starts a fresh log.
func TestSplitLogCorruptKeptAside(t *testing.T) {
	dir := t.TempDir()
	st, err := storage.Open(context.Background(), "file://"+dir, storage.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	_, v, _ := newNumbersCoordinator(t, st)
	name := filepath.Join(dir, filepath.FromSlash(splitLogName(recoverJobID, v)))
	if err := os.MkdirAll(filepath.Dir(name), 0o755); err != nil {
		t.Fatal(err)
	}
	bad := []byte("{\"v\":1,\"seq\":1,\"kind\":\"assign\",\"subtask\":0}\n{\"v\":1}\n")
	if err := os.WriteFile(name, bad, 0o644); err != nil {
		t.Fatal(err)
	}
	sc, _, _ := newNumbersCoordinator(t, st)
	if sc.trackers[v].Seq() != 0 {
		t.Fatalf("tracker from a corrupt log: seq %d", sc.trackers[v].Seq())
	}
	if _, err := os.Stat(name); !os.IsNotExist(err) {
		t.Fatalf("corrupt log still in place: %v", err)
	}
	kept, _ := filepath.Glob(name + ".bad-*")
	if len(kept) != 1 {
		t.Fatalf("kept copies %v", kept)
	}
	if got, _ := os.ReadFile(kept[0]); !strings.EqualFold(string(got), string(bad)) {
		t.Fatalf("kept copy changed: %q", got)
	}
}

// A log write that fails reaches the waiting callback with the file named, so the AM
// fails the job over instead of handing out a split the log does not hold; the next
// write carries everything.
func TestSplitLogWriteFailureReported(t *testing.T) {
	local, err := storage.Open(context.Background(), "file://"+t.TempDir(), storage.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer local.Close()
	st := &failingCommits{Storage: local, n: 1}
	sc, v, posts := newNumbersCoordinator(t, st)
	if err := sc.reset(1, map[core.VertexID]int{v: 2}, nil, 0); err != nil {
		t.Fatal(err)
	}
	settle(posts) // the compaction at reset meets the failure
	first, _, _, err := sc.request(1, v, 0)
	if err != nil {
		t.Fatal(err)
	}
	durable := make(chan error, 1)
	sc.persist(v, func(err error) { durable <- err })
	for err := error(nil); ; {
		select {
		case f := <-posts:
			f()
			continue
		case err = <-durable:
		}
		if err != nil {
			t.Fatalf("second write failed too: %v", err)
		}
		break
	}
	es := readSplitLog(t, local, recoverJobID, v)
	var assigned []string
	for _, e := range es {
		for _, a := range e.Assignments {
			for _, s := range a.Splits {
				assigned = append(assigned, s.ID)
			}
		}
	}
	if len(assigned) != 1 || assigned[0] != first[0].ID || sc.unsent != 0 {
		t.Fatalf("log after a failed then a good write: %+v (unsent %d)", es, sc.unsent)
	}

	st.n = 1
	if _, _, _, err := sc.request(1, v, 1); err != nil {
		t.Fatal(err)
	}
	sc.persist(v, func(err error) { durable <- err })
	for {
		select {
		case f := <-posts:
			f()
			continue
		case err := <-durable:
			if err == nil || !strings.Contains(err.Error(), splitLogName(recoverJobID, v)) {
				t.Fatalf("failed write reported %v, want an error naming the log", err)
			}
		}
		break
	}
}
