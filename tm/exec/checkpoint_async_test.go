package exec_test

import (
	"context"
	"errors"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/tidestream/tide/core"
	"github.com/tidestream/tide/examples"
	"github.com/tidestream/tide/state"
	"github.com/tidestream/tide/storage"
	"github.com/tidestream/tide/tm/exec"
)

// failingCreate fails the creation of files whose name fail accepts.
type failingCreate struct {
	storage.Storage
	fail   func(name string) bool
	failed atomic.Int64
}

func (f *failingCreate) Create(ctx context.Context, name string) (storage.Writer, error) {
	if f.fail(name) {
		f.failed.Add(1)
		return nil, errors.New("injected upload failure")
	}
	return f.Storage.Create(ctx, name)
}

// TestCheckableCountExactlyOnceWithAsyncSnapshots runs CheckableCount with its keyed state
// in pebble, checkpoints written in the background, through rescales 2 → 3 → 1; the
// upload of one checkpoint's state fails, which declines that checkpoint and nothing else.
func TestCheckableCountExactlyOnceWithAsyncSnapshots(t *testing.T) {
	for _, backend := range []state.Type{state.Pebble, state.Hashmap} {
		t.Run(string(backend), func(t *testing.T) {
			out := t.TempDir()
			args := []string{"--records", "20000", "--keys", "500", "--rate", "2500", "--output", out}
			job, err := examples.BuildCheckableCount(args)
			if err != nil {
				t.Fatal(err)
			}
			var fc *failingCreate
			dir := t.TempDir()
			am := newFakeAM(t, job, 2, func(c *exec.Config) {
				c.StateBackend = exec.StateBackendConfig{Type: backend, Dir: dir}
				if fc == nil {
					fc = &failingCreate{Storage: c.Storage, fail: func(name string) bool {
						return strings.Contains(name, "/chk-2/") && strings.HasSuffix(name, ".state")
					}}
				}
				c.Storage = fc
			})
			am.checkpointing = true
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			go am.run(ctx, 40*time.Millisecond)

			am.deploy(2)
			am.waitFor("two checkpoints at parallelism 2", func() bool { return am.completedIn >= 2 })
			am.deploy(3)
			am.waitFor("two checkpoints at parallelism 3", func() bool { return am.completedIn >= 2 })
			am.deploy(1)
			am.waitFor("the job to finish", func() bool { return am.allInState(core.TaskFinished) })

			got, err := examples.ReadCommittedOutput(out)
			if err != nil {
				t.Fatal(err)
			}
			want, _ := examples.ExpectedOutput(args)
			if !slices.Equal(got, want) {
				t.Fatalf("output differs from the exact answer (%d lines, want %d)", len(got), len(want))
			}
			if fc.failed.Load() == 0 {
				t.Fatal("no upload failed: the test did not decline a checkpoint")
			}
			am.mu.Lock()
			defer am.mu.Unlock()
			if len(am.failures) > 0 {
				t.Fatalf("failures: %v", am.failures)
			}
		})
	}
}
