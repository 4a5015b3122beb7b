package am

import (
	"context"
	"errors"
	"log/slog"
	"sync"
	"testing"
	"time"

	"github.com/tidestream/tide/storage"
)

// failingDeletes fails the first n deletes, as a NameNode in safe mode or a directory
// that a writer was still filling ("directory not empty") would.
type failingDeletes struct {
	storage.Storage
	mu    sync.Mutex
	n     int
	tries int
}

func (f *failingDeletes) Delete(ctx context.Context, name string) error {
	f.mu.Lock()
	f.tries++
	fail := f.n > 0
	f.n--
	f.mu.Unlock()
	if fail {
		return errors.New("directory not empty")
	}
	return f.Storage.Delete(ctx, name)
}

// A checkpoint whose deletion fails is deleted again until it is gone.
func TestDiscardRetriesUntilGone(t *testing.T) {
	old := discardRetry
	discardRetry.first, discardRetry.max = time.Millisecond, 5*time.Millisecond
	defer func() { discardRetry = old }()
	ctx := context.Background()
	local, err := storage.Open(ctx, "file://"+t.TempDir(), storage.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer local.Close()
	if err := storage.WriteFile(ctx, local, testJobID+"/chk-7/src-0.state", []byte("x")); err != nil {
		t.Fatal(err)
	}
	st := &failingDeletes{Storage: local, n: 3}
	stopCtx, stop := context.WithCancel(ctx)
	defer stop()
	c := &checkpointCoordinator{log: slog.New(slog.DiscardHandler), store: &checkpointStore{st: st, jobID: testJobID},
		stopCtx: stopCtx, stopWork: stop}
	c.discard(7)
	c.wait()
	if _, err := local.Stat(ctx, testJobID+"/chk-7"); !errors.Is(err, storage.ErrNotFound) {
		t.Fatalf("chk-7 after discard: %v, want it gone", err)
	}
	if st.tries != 4 {
		t.Fatalf("deletes tried %d times, want 4 (three failures, then success)", st.tries)
	}
}
