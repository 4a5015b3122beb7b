package am_test

import (
	"fmt"
	"testing"
	"time"

	"github.com/tidestream/tide/examples"
	"github.com/tidestream/tide/internal/testkit"
	"github.com/tidestream/tide/storage"
)

// While the checkpoint storage stalls on a checkpoint's _metadata, the AM's event loop goes
// on: a TaskManager's loss is handled, heartbeats and REST are answered. Once the storage
// answers, the checkpoint completes and the job runs on what is left, restored from it.
func TestEventLoopRunsWhileStorageStalls(t *testing.T) {
	var stall *testkit.StallStorage
	out := t.TempDir()
	c := startCluster(t, clusterOptions{job: examples.CheckableCountName,
		args: []string{"--records", "100000000", "--keys", "5", "--rate", "2000", "--output", out}, ckptDir: t.TempDir(),
		interval: 100 * time.Millisecond, dynamic: []string{"heartbeat.interval=100 ms"},
		wrap: func(st storage.Storage) storage.Storage { stall = testkit.NewStallStorage(st); return stall }})
	c.addTM("tm-a", 1)
	c.addTM("tm-b", 1)
	c.waitRunningAt(t, 2)
	testkit.WaitFor(t, "a completed checkpoint", func() (bool, error) {
		var st testkit.CheckpointStats
		err := c.getJSON("/jobs/"+jobID+"/checkpoints", &st)
		return st.Counts.Completed > 0, err
	})

	stall.Stall("_metadata")
	testkit.WaitFor(t, "a checkpoint's _metadata write stalled", func() (bool, error) { return stall.Blocked() > 0, nil })
	completed := stall.Commits("_metadata")
	var during testkit.CheckpointStats
	if err := c.getJSON("/jobs/"+jobID+"/checkpoints", &during); err != nil {
		t.Fatal(err)
	}
	if len(during.History) == 0 || during.History[0].Status != "IN_PROGRESS" {
		t.Fatalf("newest checkpoint while its _metadata stalls: %+v, want IN_PROGRESS", during.History)
	}
	stalled := during.History[0].ID

	type tmInfo struct {
		ID                     string `json:"id"`
		TimeSinceLastHeartbeat int64  `json:"timeSinceLastHeartbeat"`
	}
	heartbeatOf := func(id string) (int64, bool, error) {
		var body struct {
			TaskManagers []tmInfo `json:"taskmanagers"`
		}
		if err := c.getJSON("/taskmanagers", &body); err != nil {
			return 0, false, err
		}
		for _, tm := range body.TaskManagers {
			if tm.ID == id {
				return tm.TimeSinceLastHeartbeat, true, nil
			}
		}
		return 0, false, nil
	}
	c.stopTM("tm-b")
	testkit.WaitFor(t, "tm-b's loss handled", func() (bool, error) {
		_, listed, err := heartbeatOf("tm-b")
		return !listed, err
	})
	// Heartbeats are handled: the time since tm-a's last one drops at least once.
	prev := int64(-1)
	testkit.WaitFor(t, "a heartbeat of tm-a handled", func() (bool, error) {
		since, listed, err := heartbeatOf("tm-a")
		if err != nil || !listed {
			return false, fmt.Errorf("tm-a listed %v: %v", listed, err)
		}
		dropped := prev >= 0 && since < prev
		prev = since
		return dropped, nil
	})
	if stall.Blocked() == 0 || stall.Commits("_metadata") != completed {
		t.Fatal("the _metadata write was no longer stalled: the test proved nothing")
	}

	stall.Release()
	c.waitRunningAt(t, 1)
	// The new attempt was held back until the stalled checkpoint completed, and restored it.
	var st testkit.CheckpointStats
	if err := c.getJSON("/jobs/"+jobID+"/checkpoints", &st); err != nil {
		t.Fatal(err)
	}
	if st.Latest.Restored == nil || st.Latest.Restored.ID != stalled {
		t.Fatalf("the attempt after the stall restored %+v, want checkpoint %d whose _metadata was stalled", st.Latest.Restored, stalled)
	}
}
