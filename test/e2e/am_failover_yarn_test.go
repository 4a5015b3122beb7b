package e2e

import (
	"context"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	"github.com/tidestream/tide/internal/testkit"
	"github.com/tidestream/tide/test/hadoop/hadooptest"
	"github.com/tidestream/tide/yarn"
)

// yarnFailuresWindow is the test's yarn.application-attempt-failures-validity-interval:
// an AM failure older than this no longer counts towards the attempt limit, so the
// mini-cluster's yarn.resourcemanager.am.max-attempts=2 allows a third attempt when the
// kills are further apart.
const yarnFailuresWindow = 5 * time.Second

// YARN: the AM is SIGKILLed twice (attempts 1 and 2) while CheckableCount runs at a steady
// rate; the TaskManager containers of attempt 1 keep their subtasks running and the AMs of
// attempts 2 and 3 adopt them: the same job attempt, nothing restored, the same
// TaskManager processes, checkpoints going on, exact output, and records kept reaching the
// sink while the AM was away (checkFlowedThrough).
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
	const records = 480000
	jobArgs := stampedCountArgs(records, out, stamps)
	r := startYarnRun(t, env, []string{"-Dyarn.application-attempts=3",
		"-Dyarn.application-attempt-failures-validity-interval=" + strconv.Itoa(int(yarnFailuresWindow.Milliseconds())),
		"-Djobmanager.failover.task-adoption.timeout=60 s"}, jobArgs)
	jid := r.jobID(t)
	waitYarnRunning(t, r.track, jid, 2, nil)
	completed := func(track string) int64 {
		var s testkit.CheckpointStats
		if err := testkit.GetJSON(context.Background(), track+"/jobs/"+jid+"/checkpoints", &s); err != nil {
			return -1
		}
		return s.Counts.Completed
	}
	testkit.WaitFor(t, "a completed checkpoint", func() (bool, error) { return completed(r.track) > 0, nil })
	var before testkit.JobDetails
	if err := testkit.GetJSON(context.Background(), r.track+"/jobs/"+jid, &before); err != nil {
		t.Fatal(err)
	}
	procs := containerProcesses(r.app, 1, "taskmanager")
	if len(procs) != 2 {
		t.Fatalf("TaskManager processes of attempt 1: %v, want 2", procs)
	}
	waitContainersReported(t, site, procs)

	track := r.track
	var away []amAbsent
	var lastKill time.Time
	for n := 1; n <= 2; n++ {
		if wait := time.Until(lastKill.Add(yarnFailuresWindow + time.Second)); wait > 0 {
			time.Sleep(wait) // the previous failure has left the window: attempt n+1 is allowed
		}
		prev := completed(track)
		// Adoption needs the running deployment in the persisted AM state; the AM writes it
		// in the background, so an AM killed within that lag of a rescale (p=1 -> 2 at the
		// second TaskManager) is followed by a restore instead (safe, not what this test is
		// about). At load 30 that lag exceeded the time to the first kill.
		waitDeploymentPersisted(t, r, jid, before.Attempt)
		killed := time.Now()
		lastKill = killed
		killAMOf(t, r.app, n)
		track = waitAttempt(t, env, r.app, int32(n+1), track)
		waitYarnRunning(t, track, jid, 2, nil)
		back := time.Now()
		var after testkit.JobDetails
		if err := testkit.GetJSON(context.Background(), track+"/jobs/"+jid, &after); err != nil {
			t.Fatal(err)
		}
		if after.Attempt != before.Attempt || after.RestoreFrom != 0 {
			t.Fatalf("AM attempt %d runs job attempt %d restored from checkpoint %d; want attempt %d adopted, nothing restored",
				n+1, after.Attempt, after.RestoreFrom, before.Attempt)
		}
		if lf := after.LastFailover; lf == nil || lf.Outcome != "ADOPTED" || lf.ReportedSubtasks != lf.TotalSubtasks {
			t.Fatalf("AM attempt %d: lastFailover %+v; want ADOPTED with every subtask reported", n+1, lf)
		}
		testkit.WaitFor(t, fmt.Sprintf("a checkpoint completed by AM attempt %d", n+1), func() (bool, error) {
			c := completed(track)
			return c > prev, fmt.Errorf("%d completed, %d before the kill", c, prev)
		})
		away = append(away, amAbsent{killed: killed, back: back, checkpointed: time.Now()})
		t.Logf("AM attempt %d killed at %s; attempt %d adopted the subtasks and checkpointed", n, killed.Format("15:04:05.000"), n+1)
	}
	now := containerProcesses(r.app, 1, "taskmanager")
	if !maps.Equal(now, procs) {
		t.Errorf("TaskManager processes changed across the AM failovers: %v, then %v", procs, now)
	}
	r.wait(t, 4*time.Minute)
	testkit.CheckExactOutput(t, out, jobArgs)
	checkFlowedThrough(t, stamps, records, away)
}

// waitDeploymentPersisted waits until the AM state file on HDFS names attempt as the
// deployment a next AM attempt may adopt.
func waitDeploymentPersisted(t *testing.T, r *yarnRun, jid string, attempt int64) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	_, staging := openStaging(ctx, t, r)
	waitDeploymentRecorded(t, staging, r.app+"/checkpoints/"+jid+"/_am_state", attempt)
}
