package e2e

import (
	"syscall"
	"testing"
	"time"

	"github.com/tidestream/tide/examples"
)

// TestReactiveScaleUpAndDown: AM + 2 TaskManagers run at parallelism 2 (= total slots),
// a third scales the job up, and SIGKILL of one scales it down as soon as its connection
// drops (the heartbeat timeout is 30 min here, so nothing else could notice in time).
func TestReactiveScaleUpAndDown(t *testing.T) {
	dyn := reactive(t.TempDir(), "500 ms")
	c := startCluster(t, examples.TopSpeedWindowingName, []string{"--cars", "8"}, 2, dyn)
	id := jobID(t, c)
	d := waitRunningAt(t, c, id, 2)
	waitCheckpointIn(t, c, id, d.Attempt)

	start := time.Now()
	tm3, err := c.AddTaskManager(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	d = waitRunningAt(t, c, id, 3)
	up := time.Since(start)
	waitCheckpointIn(t, c, id, d.Attempt)
	t.Logf("scale-up: %s started → RUNNING at parallelism 3 in %s, first checkpoint of attempt %d after %s",
		tm3, up.Round(time.Millisecond), d.Attempt, time.Since(start).Round(time.Millisecond))

	start = time.Now()
	if err := c.Signal("tm-1", syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	d = waitRunningAt(t, c, id, 2)
	down := time.Since(start)
	waitCheckpointIn(t, c, id, d.Attempt)
	t.Logf("scale-down: SIGKILL tm-1 → RUNNING at parallelism 2 in %s, first checkpoint of attempt %d after %s",
		down.Round(time.Millisecond), d.Attempt, time.Since(start).Round(time.Millisecond))

	var tms struct {
		TaskManagers []struct {
			ID string `json:"id"`
		} `json:"taskmanagers"`
	}
	if err := rest(c, "/taskmanagers", &tms); err != nil {
		t.Fatal(err)
	}
	if len(tms.TaskManagers) != 2 {
		t.Fatalf("REST lists %d TaskManagers after the kill, want 2: %+v", len(tms.TaskManagers), tms.TaskManagers)
	}
	var rescales struct {
		Rescales []struct {
			Trigger string `json:"trigger"`
			Outcome string `json:"outcome"`
		} `json:"rescales"`
	}
	if err := rest(c, "/jobs/"+id+"/rescales", &rescales); err != nil {
		t.Fatal(err)
	}
	if len(rescales.Rescales) < 3 {
		t.Fatalf("rescale history %+v: want the initial schedule, a scale-up and a scale-down", rescales.Rescales)
	}
}
