package e2e

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/tidestream/tide/examples"
	"github.com/tidestream/tide/internal/testkit"
)

// TestJobEndDeletesLocalStateAndCheckpoints runs CheckableCount on the pebble backend with
// incremental checkpoints and local recovery at parallelism 2, once to its end and once
// cancelled. While it runs, each TaskManager keeps the checkpoints' files in its local
// state store (tide-localstate-<TaskManager id>-<pid>-<random> under
// state.backend.pebble.localdir).
// When the job ends the AM's Disconnect says so and every TaskManager deletes the job's
// directory there; the AM deletes the job's checkpoint directory, shared/ included
// (DELETE_ON_CANCELLATION, the default).
func TestJobEndDeletesLocalStateAndCheckpoints(t *testing.T) {
	for _, c := range []struct {
		name    string
		records string
		cancel  bool
	}{
		{name: "finished", records: "120000"},
		{name: "cancelled", records: "100000000", cancel: true},
	} {
		t.Run(c.name, func(t *testing.T) {
			out, ckpt, stateDir := t.TempDir(), t.TempDir(), t.TempDir()
			args := []string{"--records", c.records, "--keys", "2000", "--rate", "20000", "--output", out}
			dyn := append(reactive(ckpt, "200 ms"), "state.backend.type=pebble", "state.backend.pebble.localdir="+stateDir,
				"execution.checkpointing.incremental=true", "state.backend.local-recovery=true")
			cl := startCluster(t, examples.CheckableCountName, args, 2, dyn)
			id := jobID(t, cl)
			waitRunningAt(t, cl, id, 2)
			testkit.WaitFor(t, "local state entries of the job on both TaskManagers", func() (bool, error) {
				for _, tm := range []string{"tm-1", "tm-2"} {
					entries, err := filepath.Glob(filepath.Join(stateDir, "tide-localstate-"+tm+"-*", id, "*", "*", "chk-*", "index.json"))
					if err != nil || len(entries) == 0 {
						return false, fmt.Errorf("%s: no committed entry under %s (%v)", tm, stateDir, err)
					}
				}
				if _, err := os.Stat(filepath.Join(ckpt, id, "shared")); err != nil {
					return false, fmt.Errorf("no shared checkpoint files yet: %w", err)
				}
				return true, nil
			})
			if c.cancel {
				cancelJob(t, cl, id)
			} else {
				waitExact(t, cl, 3*time.Minute, out, args)
			}
			if _, err := os.Stat(filepath.Join(ckpt, id)); !errors.Is(err, os.ErrNotExist) {
				left, _ := filepath.Glob(filepath.Join(ckpt, id, "*"))
				t.Errorf("the job's checkpoint directory survives the job's end: %v (holds %v)", err, left)
			}
			testkit.WaitFor(t, "the job's local state deleted on every TaskManager", func() (bool, error) {
				left, err := filepath.Glob(filepath.Join(stateDir, "tide-localstate-*", id))
				if err != nil || len(left) > 0 {
					return false, fmt.Errorf("still there: %v (%v)", left, err)
				}
				return true, nil
			})
		})
	}
}
