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
	"github.com/tidestream/tide/standalone"
)

// A standalone AM SIGKILLed twice while CheckableCount runs at a steady rate, each time
// started again by hand on the same checkpoint directory and ports: the TaskManagers keep
// their subtasks running while the AM is away and each new AM adopts them (same attempt,
// nothing restored, no task deployed again: every TaskManager deployed once), checkpoints
// go on above the ids the dead AM used, and the committed output is exact.
func TestAMFailoverAdoptsRunningTasksStandalone(t *testing.T) {
	ckpt, out := t.TempDir(), t.TempDir()
	dyn := append(reactive(ckpt, "300 ms"), "jobmanager.failover.task-adoption.timeout=60 s")
	args := []string{"--records", "160000", "--keys", "7", "--rate", "4000", "--output", out}
	c, r := startAMRestartCluster(t, dyn, examples.CheckableCountName, args, 2)
	jid := jobID(t, c)
	d := waitRunningAt(t, c, jid, 2)
	waitCheckpointIn(t, c, jid, d.Attempt)

	var cur *restartedAM
	for n := 2; n <= 3; n++ {
		before := latestCompleted(t, c, jid)
		if cur == nil {
			r.kill(t)
		} else {
			pid, ok := amProcess(r.restPort)
			if !ok {
				t.Fatal("no AM process found")
			}
			if err := syscall.Kill(pid, syscall.SIGKILL); err != nil {
				t.Fatal(err)
			}
			<-cur.done
		}
		cur = r.start(t, n)
		after := waitRunningAt(t, c, jid, 2)
		if after.Attempt != d.Attempt || after.RestoreFrom != 0 {
			t.Fatalf("AM %d: attempt %d restored from checkpoint %d; want attempt %d adopted, nothing restored (logs in %s)", n, after.Attempt, after.RestoreFrom, d.Attempt, c.LogDir())
		}
		testkit.WaitFor(t, fmt.Sprintf("a checkpoint above %d under AM %d", before, n), func() (bool, error) {
			return latestCompleted(t, c, jid) > before, nil
		})
	}
	cur.wait(t, 4*time.Minute)
	testkit.CheckExactOutput(t, out, args)
	for n := 2; n <= 3; n++ {
		log, err := os.ReadFile(filepath.Join(c.LogDir(), fmt.Sprintf("jobmanager-%d.log", n)))
		if err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(string(log), "recovered deployment adopted") {
			t.Errorf("AM %d did not adopt the running deployment (log %s)", n, filepath.Join(c.LogDir(), fmt.Sprintf("jobmanager-%d.log", n)))
		}
	}
	tmLogs, _ := filepath.Glob(filepath.Join(c.LogDir(), "taskmanager-*.log"))
	if len(tmLogs) != 2 {
		t.Fatalf("TaskManager logs %v, want 2", tmLogs)
	}
	for _, p := range tmLogs {
		b, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		if n := strings.Count(string(b), "deploying subtasks"); n != 1 {
			t.Errorf("%s deployed subtasks %d times, want once: every AM failover adopted them", p, n)
		}
		if n := strings.Count(string(b), "the AM adopted the subtasks kept across the AM failover"); n != 2 {
			t.Errorf("%s: %d adoptions, want 2", p, n)
		}
	}
}

// latestCompleted is the id of the latest completed checkpoint the AM knows (0: none).
func latestCompleted(t *testing.T, c *standalone.LocalCluster, jid string) int64 {
	t.Helper()
	var s testkit.CheckpointStats
	if err := rest(c, "/jobs/"+jid+"/checkpoints", &s); err != nil || s.Latest.Completed == nil {
		return 0
	}
	return s.Latest.Completed.ID
}
