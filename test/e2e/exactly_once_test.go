package e2e

import (
	"fmt"
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
func TestCheckableCountExactlyOnce(t *testing.T) {
	out := t.TempDir()
	args := []string{"--records", "400000", "--keys", "13", "--rate", "20000", "--output", out}
	dyn := reactive(t.TempDir(), "200 ms")
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
}
