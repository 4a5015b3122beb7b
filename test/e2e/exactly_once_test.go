package e2e

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/tidestream/tide/examples"
	"github.com/tidestream/tide/internal/testkit"
)

// TestCheckableCountExactlyOnce runs the bounded checkable job across a scale-up, a
// SIGKILL of a TaskManager in the middle of a checkpoint (it is frozen with SIGSTOP so
// the checkpoint cannot complete, then killed) and a scale-up again, and compares the
// committed output with the exact answer: nothing lost, nothing twice.
//
// It runs once per keyed state backend (state.backend.type); the pebble run uses Flink's
// "rocksdb" alias and more keys, and checks that the TaskManagers kept the keyed state in
// Pebble instances under state.backend.pebble.localdir.
func TestCheckableCountExactlyOnce(t *testing.T) {
	for _, c := range []struct {
		name    string
		backend string // state.backend.type
		keys    string
		pebble  bool
		extra   []string
	}{
		{name: "hashmap", backend: "hashmap", keys: "13"},
		{name: "rocksdb", backend: "rocksdb", keys: "5000", pebble: true},
		// Incremental checkpoints and local recovery (Flink's keys) on the pebble backend.
		{name: "pebble-incremental-local", backend: "pebble", keys: "5000", pebble: true,
			extra: []string{"execution.checkpointing.incremental=true", "state.backend.local-recovery=true"}},
	} {
		t.Run(c.name, func(t *testing.T) { testCheckableCountExactlyOnce(t, c.backend, c.keys, c.pebble, c.extra...) })
	}
}

func testCheckableCountExactlyOnce(t *testing.T, backend, keys string, pebble bool, extra ...string) {
	out := t.TempDir()
	args := []string{"--records", "400000", "--keys", keys, "--rate", "20000", "--output", out}
	stateDir := t.TempDir()
	dyn := append(reactive(t.TempDir(), "200 ms"), "state.backend.type="+backend, "state.backend.pebble.localdir="+stateDir)
	dyn = append(dyn, extra...)
	c := startCluster(t, examples.CheckableCountName, args, 2, dyn)
	id := jobID(t, c)
	d := waitRunningAt(t, c, id, 2)
	waitCheckpointIn(t, c, id, d.Attempt)

	// Rescale 1: up to 3.
	if _, err := c.AddTaskManager(t.Context()); err != nil {
		t.Fatal(err)
	}
	d = waitRunningAt(t, c, id, 3)
	waitCheckpointIn(t, c, id, d.Attempt)

	// Rescale 2: kill tm-2 while a checkpoint waits for it.
	var before testkit.CheckpointStats
	if err := rest(c, "/jobs/"+id+"/checkpoints", &before); err != nil {
		t.Fatal(err)
	}
	if err := c.Signal("tm-2", syscall.SIGSTOP); err != nil {
		t.Fatal(err)
	}
	var pendingID int64
	testkit.WaitFor(t, "a checkpoint in progress with tm-2 frozen", func() (bool, error) {
		var s testkit.CheckpointStats
		if err := rest(c, "/jobs/"+id+"/checkpoints", &s); err != nil {
			return false, err
		}
		for _, h := range s.History {
			if h.Status == "IN_PROGRESS" && h.Attempt == d.Attempt && (before.Latest.Completed == nil || h.ID > before.Latest.Completed.ID) {
				pendingID = h.ID
				return true, nil
			}
		}
		return false, fmt.Errorf("no checkpoint in progress")
	})
	if err := c.Signal("tm-2", syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	t.Logf("killed tm-2 during checkpoint %d of attempt %d", pendingID, d.Attempt)
	d = waitRunningAt(t, c, id, 2)
	waitCheckpointIn(t, c, id, d.Attempt)

	// Rescale 3: up to 3 again.
	if _, err := c.AddTaskManager(t.Context()); err != nil {
		t.Fatal(err)
	}
	waitRunningAt(t, c, id, 3)

	waitExact(t, c, 3*time.Minute, out, args)
	if pebble {
		logs, err := os.ReadDir(c.LogDir())
		if err != nil {
			t.Fatal(err)
		}
		var opened, alias int
		for _, e := range logs {
			b, err := os.ReadFile(filepath.Join(c.LogDir(), e.Name()))
			if err != nil {
				t.Fatal(err)
			}
			opened += strings.Count(string(b), "keyed state in pebble")
			alias += strings.Count(string(b), "rocksdb is an alias")
		}
		if opened == 0 || (alias == 0 && backend == "rocksdb") {
			t.Fatalf("TaskManager logs show %d pebble instances opened and %d alias notices; want both > 0", opened, alias)
		}
		if len(extra) > 0 {
			local, downloaded := restoreBytes(t, filepath.Dir(c.LogDir()))
			t.Logf("restores: %d bytes from local state, %d downloaded", local, downloaded)
		}
		t.Logf("%d pebble instances opened over the run", opened)
	}
}
