package warmup

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/tidestream/tide/core/checkpoint"
	"github.com/tidestream/tide/storage"
)

// churningStorage is a real checkpoint storage (file://) on which checkpoints keep
// completing while a copy reads them, as on a job whose checkpoint interval is shorter
// than a copy's download: before every third file the copy opens, the next checkpoint
// completes and subsumes the current one (its own files and _metadata deleted, the shared
// table it no longer lists too) and the AM asks the copy to follow it.
type churningStorage struct {
	storage.Storage
	subsume func() // called under mu

	mu     sync.Mutex
	opens  map[string]int // files served, by name
	opened int            // files asked for
}

func (s *churningStorage) Open(ctx context.Context, name string) (io.ReadCloser, error) {
	if strings.HasSuffix(name, "/"+checkpoint.MetadataFile) {
		return s.Storage.Open(ctx, name)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.opened++
	if s.opened%3 == 0 {
		s.subsume()
	}
	rc, err := s.Storage.Open(ctx, name)
	if err == nil {
		s.opens[name]++
	}
	return rc, err
}

// A standby copy whose checkpoint is subsumed again and again while it downloads (the
// 1 GiB standby on HDFS that retried 376 times, each time from scratch) keeps what it
// downloaded and continues with the newest checkpoint: it gets to hold one while they
// keep coming, and no file was downloaded twice.
func TestCopyOutlivesCheckpointsSubsumedMidFetch(t *testing.T) {
	ctx := context.Background()
	st, local, _, _ := setup(t)
	r := &reports{ch: make(chan Progress, 16)}
	cs := &churningStorage{Storage: st, opens: map[string]int{}}
	f := New(Config{JobID: job, Storage: cs, Local: local, Report: r.report})
	t.Cleanup(f.Close)

	// Checkpoint k lists six shared tables that stay, one new table (its predecessor
	// compacted away) and its own MANIFEST, last, as a database checkpoint's files are
	// listed. A copy that starts over at every checkpoint never gets through the eight
	// files before the next one: it would hold a checkpoint only once they stop coming.
	shared := func(i int) string { return fmt.Sprintf("%s/shared/map-0-%03d.sst", job, i) }
	own := func(k int64) string { return fmt.Sprintf("%s/chk-%d/MANIFEST", job, k) }
	body := func(name string) []byte { return bytes.Repeat([]byte(name), 1000) }
	names := func(k int64) []string {
		var out []string
		for i := range 6 {
			out = append(out, shared(i))
		}
		return append(out, shared(100+int(k)), own(k))
	}
	write := func(k int64) {
		done := checkpoint.Completed{ID: k, Attempt: 1, Trigger: time.UnixMilli(1000 * k)}
		sub := checkpoint.SubtaskState{Subtask: checkpoint.Subtask{Vertex: "map", Index: 0}}
		for _, n := range names(k) {
			data := body(n)
			if _, err := st.Stat(ctx, n); err != nil {
				if err := storage.WriteFile(ctx, st, n, data); err != nil {
					t.Error(err)
				}
			}
			sub.Handles = append(sub.Handles, checkpoint.StateHandle{Name: n, Size: int64(len(data))})
		}
		done.Handles = []checkpoint.SubtaskState{sub}
		data, err := checkpoint.EncodeMetadata(checkpoint.NewMetadata(job, done, map[string]int{"map": 8}, nil))
		if err == nil {
			err = storage.WriteFile(ctx, st, checkpoint.MetadataPath(job, k), data)
		}
		if err != nil {
			t.Error(err)
		}
	}
	const last = 20
	rng := Range{Vertex: "map", Start: 0, End: 7}
	current := int64(1)
	cs.subsume = func() {
		if current == last {
			return
		}
		current++
		write(current)
		for _, n := range []string{checkpoint.ChkDir(job, current-1), shared(100 + int(current) - 1)} {
			if err := st.Delete(ctx, n); err != nil {
				t.Error(err)
			}
		}
		f.Request(Request{Round: 1, Kind: "STANDBY", Checkpoint: current, Ranges: []Range{rng}})
	}
	write(1)
	f.Request(Request{Round: 1, Kind: "STANDBY", Checkpoint: 1, Ranges: []Range{rng}})

	p := r.next(t)
	cs.mu.Lock()
	newest := current
	cs.mu.Unlock()
	if p.Err != nil || p.Checkpoint != newest || newest == last {
		t.Fatalf("report %+v, want the newest checkpoint (%d) held while checkpoints keep coming, and no error", p, newest)
	}
	cs.mu.Lock()
	var twice []string
	var want int64
	for n, c := range cs.opens {
		if c > 1 {
			twice = append(twice, fmt.Sprintf("%s %d times", n, c))
		}
		want += int64(len(body(n)))
	}
	cs.mu.Unlock()
	if len(twice) > 0 {
		t.Errorf("downloaded more than once: %s", strings.Join(twice, ", "))
	}
	if p.Bytes != want {
		t.Errorf("report says %d bytes downloaded, the storage served %d", p.Bytes, want)
	}
	got := local.Lookup(job, "map", newest, 0, 7)
	if len(got) != 1 || len(got[0].Files) != len(names(newest)) {
		t.Fatalf("local entries of checkpoint %d: %+v, want one with its %d files", newest, got, len(names(newest)))
	}
	for _, fl := range got[0].Files {
		if b, err := os.ReadFile(fl.Path); err != nil || !bytes.Equal(b, body(fl.Handle)) {
			t.Errorf("local copy of %s differs from the checkpoint's (err %v)", fl.Handle, err)
		}
	}
}
