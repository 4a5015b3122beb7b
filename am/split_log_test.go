package am

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync/atomic"
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
	sc.open(context.Background(), st, recoverJobID, func(f func()) bool { posts <- f; return true },
		func(d time.Duration, f func()) { time.AfterFunc(d, func() { posts <- f }) })
	t.Cleanup(sc.stop)
	return sc, core.VertexID(srcs[0].Vertex), posts
}

// assign requests a split for subtask index and waits until it is durable.
func assign(t *testing.T, sc *sourceCoordinator, posts chan func(), attempt core.AttemptID, v core.VertexID, index int) ([]stream.Split, bool) {
	t.Helper()
	splits, noMore, ok, err := sc.request(attempt, v, index, false)
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

// downStorage refuses every new file while down (a namenode outage), counting refusals.
type downStorage struct {
	storage.Storage
	down    atomic.Bool
	refused atomic.Int32
}

func (d *downStorage) Create(ctx context.Context, name string) (storage.Writer, error) {
	if d.down.Load() {
		d.refused.Add(1)
		return nil, errors.New("namenode unavailable")
	}
	return d.Storage.Create(ctx, name)
}

// waitDurable runs the loop (posts) until durable reports, and returns what it reported.
func waitDurable(t *testing.T, posts chan func(), durable chan error) error {
	t.Helper()
	deadline := time.After(time.Minute)
	for {
		select {
		case f := <-posts:
			f()
		case err := <-durable:
			return err
		case <-deadline:
			t.Fatal("no outcome of the log write within a minute")
		}
	}
}

// Every log write the storage does not take is retried until one lands, whatever wrote
// it (a compaction, an assignment); whoever waits for it hears of it only then, and an
// assignment stays counted as unsent meanwhile. A waiter of an attempt that ends first is
// let go with errAttemptEnded, and the log still reaches the storage.
func TestSplitLogWriteFailureRetried(t *testing.T) {
	local, err := storage.Open(context.Background(), "file://"+t.TempDir(), storage.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer local.Close()
	st := &downStorage{Storage: local}
	sc, v, posts := newNumbersCoordinator(t, st)
	assigned := func() []string {
		t.Helper()
		var ids []string
		for _, e := range readSplitLog(t, local, recoverJobID, v) {
			for _, a := range e.Assignments {
				for _, s := range a.Splits {
					ids = append(ids, s.ID)
				}
			}
		}
		return ids
	}

	// The compaction at reset is refused, then retried until the storage is back.
	st.down.Store(true)
	if err := sc.reset(1, map[core.VertexID]int{v: 2}, nil, 0); err != nil {
		t.Fatal(err)
	}
	for st.refused.Load() < 2 { // the first write and at least one retry
		(<-posts)()
	}
	first, _, _, err := sc.request(1, v, 0, false)
	if err != nil || len(first) != 1 {
		t.Fatalf("request: %v %v", first, err)
	}
	durable := make(chan error, 1)
	sc.persist(v, func(err error) { durable <- err })
	for refused := st.refused.Load(); st.refused.Load() == refused; {
		(<-posts)() // the assignment's write is refused too
	}
	if sc.unsent != 1 {
		t.Fatalf("unsent %d while the assignment waits for the log, want 1", sc.unsent)
	}
	st.down.Store(false)
	if err := waitDurable(t, posts, durable); err != nil {
		t.Fatalf("the assignment's write after the storage came back: %v", err)
	}
	if got := assigned(); !slices.Equal(got, []string{first[0].ID}) || sc.unsent != 0 {
		t.Fatalf("log after the retries: %v (unsent %d), want [%s]", got, sc.unsent, first[0].ID)
	}

	// An assignment of attempt 1 still waiting when attempt 2 starts is let go.
	st.down.Store(true)
	second, _, _, err := sc.request(1, v, 1, false)
	if err != nil || len(second) != 1 {
		t.Fatalf("request: %v %v", second, err)
	}
	sc.persist(v, func(err error) { durable <- err })
	for refused := st.refused.Load(); st.refused.Load() == refused; {
		(<-posts)()
	}
	if err := sc.reset(2, map[core.VertexID]int{v: 2}, nil, 0); err != nil {
		t.Fatal(err)
	}
	if err := waitDurable(t, posts, durable); !errors.Is(err, errAttemptEnded) || sc.unsent != 0 {
		t.Fatalf("the waiter of the ended attempt heard %v (unsent %d), want errAttemptEnded", err, sc.unsent)
	}
	st.down.Store(false)
	third, _, _, err := sc.request(2, v, 0, false)
	if err != nil || len(third) != 1 {
		t.Fatalf("request in attempt 2: %v %v", third, err)
	}
	sc.persist(v, func(err error) { durable <- err })
	if err := waitDurable(t, posts, durable); err != nil {
		t.Fatal(err)
	}
	if got := assigned(); !slices.Contains(got, third[0].ID) {
		t.Fatalf("log in attempt 2 holds %v, want %s among them", got, third[0].ID)
	}
}
