package am_test

import (
	"testing"
	"time"

	"github.com/tidestream/tide/api"
	"github.com/tidestream/tide/core"
	"github.com/tidestream/tide/examples"
	"github.com/tidestream/tide/internal/testkit"
)

// A scale-up with state.warmup.timeout: the new TaskManager copies the key-group ranges it
// will own while the job runs at the old parallelism, the switch happens once the copies
// hold the newest checkpoint, and the rescale history shows the warm-up, the bytes moved
// and the switch downtime. The output stays exactly once.
func TestWarmupBeforeScaleUp(t *testing.T) {
	out := t.TempDir()
	args := []string{"--records", "400000", "--keys", "5000", "--rate", "40000", "--output", out}
	c, r := scaleUpOneToTwo(t, args, []string{"state.warmup.timeout=1 min"}, "the scale-up's rescale with its warm-up and switch downtime",
		func(x api.Rescale) bool { return x.SwitchDowntime >= 0 })
	if r.Warmup == nil || r.Warmup.Planned == 0 || r.Warmup.Ready != r.Warmup.Planned || r.Warmup.TimedOut {
		t.Fatalf("rescale %+v: want a warm-up whose copies all caught up", r)
	}
	if r.BytesMoved <= 0 || r.WarmupDuration <= 0 || r.KeyGroupsMoved <= 0 {
		t.Errorf("rescale %+v: want bytes moved, a warm-up duration and moved key groups", r)
	}
	c.waitEnded(t, 2*time.Minute, core.StatusFinished)
	testkit.CheckExactOutput(t, out, args)
}

// waitCheckpoint waits for a completed checkpoint (a warm-up copies from one).
func waitCheckpoint(t *testing.T, c *cluster) {
	t.Helper()
	testkit.WaitFor(t, "a completed checkpoint", func() (bool, error) {
		var cs api.CheckpointingStatistics
		if err := c.getJSON("/jobs/"+jobID+"/checkpoints", &cs); err != nil {
			return false, err
		}
		return cs.Counts.Completed > 0, nil
	})
}

// A scale-up without warm-up (and without local recovery): the moved state is read at
// restore, and the rescale's bytes moved are what the new attempt's subtasks downloaded.
func TestColdScaleUpCountsRestoreDownloads(t *testing.T) {
	out := t.TempDir()
	args := []string{"--records", "400000", "--keys", "5000", "--rate", "40000", "--output", out}
	c, r := scaleUpOneToTwo(t, args, nil, "the scale-up's rescale with the bytes its restore downloaded",
		func(x api.Rescale) bool { return x.RestoreDownloadedBytes > 0 })
	if r.Warmup != nil || r.WarmupDuration != 0 {
		t.Errorf("rescale %+v: want no warm-up (state.warmup.timeout is 0)", r)
	}
	if r.BytesMoved != r.RestoreDownloadedBytes || r.RestoreLocalBytes != 0 {
		t.Errorf("rescale %+v: want bytes moved = the restore's downloads, nothing local (local recovery is off)", r)
	}
	c.waitEnded(t, 2*time.Minute, core.StatusFinished)
	testkit.CheckExactOutput(t, out, args)
}

// scaleUpOneToTwo runs args at parallelism 1 until a checkpoint completes, adds a second
// TaskManager, and returns the completed scale-up's rescale once ready holds for it.
func scaleUpOneToTwo(t *testing.T, args, dynamic []string, what string, ready func(api.Rescale) bool) (*cluster, api.Rescale) {
	t.Helper()
	c := startCluster(t, clusterOptions{job: examples.CheckableCountName, args: args, ckptDir: t.TempDir(),
		interval: 200 * time.Millisecond, dynamic: dynamic})
	c.addTM("tm-a", 1)
	c.waitRunningAt(t, 1)
	waitCheckpoint(t, c)
	c.addTM("tm-b", 1)
	c.waitRunningAt(t, 2)

	var r api.Rescale
	testkit.WaitFor(t, what, func() (bool, error) {
		var rs api.Rescales
		if err := c.getJSON("/jobs/"+jobID+"/rescales", &rs); err != nil {
			return false, err
		}
		for _, x := range rs.Rescales {
			if x.Trigger == string(core.TriggerNewResourceAvailable) && x.Outcome == string(core.RescaleCompleted) {
				r = x
				return ready(x), nil
			}
		}
		return false, nil
	})
	return c, r
}
