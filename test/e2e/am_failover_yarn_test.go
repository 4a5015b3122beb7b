package e2e

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	"github.com/tidestream/tide/internal/testkit"
	"github.com/tidestream/tide/test/hadoop/hadooptest"
	"github.com/tidestream/tide/yarn"
)

// YARN: the AM of attempt 1 is SIGKILLed while CheckableCount runs at a steady rate; the
// TaskManagers of attempt 1 keep their subtasks running and the AM of attempt 2 adopts
// them: the same job attempt, nothing restored, checkpoints going on, exact output, and
// records kept reaching the sink while the AM was away (checkFlowedThrough).
func TestYARNAMFailoverAdoptsRunningTasks(t *testing.T) {
	env := hadooptest.RequireYARN(t)
	f, err := os.Open(filepath.Join(env.ConfDir, "yarn-site.xml"))
	if err != nil {
		t.Fatal(err)
	}
	site, err := yarn.ParseSite(f)
	f.Close()
	if err != nil {
		t.Fatal(err)
	}
	if n, _ := strconv.Atoi(site["yarn.resourcemanager.am.max-attempts"]); n < 2 {
		t.Fatalf("the mini-cluster caps AM attempts at %q: no second attempt possible", site["yarn.resourcemanager.am.max-attempts"])
	}
	out, stamps := t.TempDir(), t.TempDir()
	const records = 160000
	jobArgs := []string{"--records", strconv.Itoa(records), "--keys", "7", "--rate", "4000", "--output", out, "--timestamps", stamps}
	r := startYarnRun(t, env, []string{"-Dyarn.application-attempts=2", "-Djobmanager.failover.task-adoption.timeout=60 s"}, jobArgs)
	jid := r.jobID(t)
	waitYarnRunning(t, r.track, jid, 2, nil)
	var before testkit.JobDetails
	testkit.WaitFor(t, "a completed checkpoint", func() (bool, error) {
		var s testkit.CheckpointStats
		if err := testkit.GetJSON(context.Background(), r.track+"/jobs/"+jid+"/checkpoints", &s); err != nil {
			return false, err
		}
		return s.Counts.Completed > 0, fmt.Errorf("%d completed", s.Counts.Completed)
	})
	if err := testkit.GetJSON(context.Background(), r.track+"/jobs/"+jid, &before); err != nil {
		t.Fatal(err)
	}
	procs := containerProcesses(r.app, 1, "taskmanager")
	waitContainersReported(t, site, procs)
	killed := time.Now()
	killAM(t, r.app)
	track2 := waitAttempt2(t, env, r.app, r.track)
	waitYarnRunning(t, track2, jid, 2, nil)
	back := time.Now()
	var after testkit.JobDetails
	if err := testkit.GetJSON(context.Background(), track2+"/jobs/"+jid, &after); err != nil {
		t.Fatal(err)
	}
	if after.Attempt != before.Attempt || after.RestoreFrom != 0 {
		t.Fatalf("AM attempt 2 runs job attempt %d restored from checkpoint %d; want attempt %d adopted, nothing restored",
			after.Attempt, after.RestoreFrom, before.Attempt)
	}
	var cs testkit.CheckpointStats
	if err := testkit.GetJSON(context.Background(), track2+"/jobs/"+jid+"/checkpoints", &cs); err != nil {
		t.Fatal(err)
	}
	prev := cs.Counts.Completed
	testkit.WaitFor(t, "a checkpoint completed by AM attempt 2", func() (bool, error) {
		if err := testkit.GetJSON(context.Background(), track2+"/jobs/"+jid+"/checkpoints", &cs); err != nil {
			return false, err
		}
		return cs.Counts.Completed > prev, nil
	})
	checkpointed := time.Now()
	r.wait(t, 4*time.Minute)
	testkit.CheckExactOutput(t, out, jobArgs)
	checkFlowedThrough(t, stamps, records, []amAbsent{{killed: killed, back: back, checkpointed: checkpointed}})
}
