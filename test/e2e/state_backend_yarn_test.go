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
)

// yarnPebbleRun sizes one run of TestStateBackendYARNAMKill: CheckableCount --dedup with
// one key per number (two keyed state entries per number) at parallelism 2 on YARN.
type yarnPebbleRun struct {
	records int64
	rate    string // per source subtask
	timeout time.Duration
	managed string // taskmanager.memory.managed.size
	process string // taskmanager.memory.process.size (empty: yarnSettings' 256 mb)
}

// yarnPebbleDefault keeps go test ./... short; the 10M-key run is behind the statelarge
// build tag (make state-large).
var yarnPebbleDefault = yarnPebbleRun{records: 200_000, rate: "4000", timeout: 4 * time.Minute, managed: "8m"}

// TestStateBackendYARNAMKill runs CheckableCount --dedup on YARN on the pebble backend
// with incremental checkpoints and local recovery, checkpoints on HDFS (under the staging
// directory), managed memory small enough for the state to spill into SST files, and
// SIGKILLs the AM after two completed checkpoints. The AM of attempt 2 does not adopt the
// running subtasks (task adoption off): it restores the job from the newest checkpoint on
// HDFS, on the TaskManager containers of attempt 1, which read the checkpoint's files
// (local recovery: what a TaskManager kept locally is read from disk). The output is exact.
func TestStateBackendYARNAMKill(t *testing.T) {
	testPebbleYARNAMKill(t, yarnPebbleDefault)
}

func testPebbleYARNAMKill(t *testing.T, run yarnPebbleRun) {
	env := requireYARNAttempts(t)
	out, stateDir := t.TempDir(), t.TempDir()
	n := strconv.FormatInt(run.records, 10)
	jobArgs := []string{"--records", n, "--keys", n, "--dedup", "--rate", run.rate, "--output", out}
	extra := []string{"-Dyarn.application-attempts=2", "-Djobmanager.failover.task-adoption.timeout=0",
		"-Dstate.backend.type=pebble", "-Dexecution.checkpointing.incremental=true", "-Dstate.backend.local-recovery=true",
		"-Dstate.backend.pebble.localdir=" + stateDir, "-Dtaskmanager.memory.managed.size=" + run.managed}
	if run.process != "" {
		extra = append(extra, "-Dtaskmanager.memory.process.size="+run.process)
	}
	start := time.Now()
	r := startYarnRun(t, env, extra, jobArgs)
	jid := r.jobID(t)
	waitYarnRunning(t, r.track, jid, 2, nil)
	var before testkit.JobDetails
	if err := testkit.GetJSON(context.Background(), r.track+"/jobs/"+jid, &before); err != nil {
		t.Fatal(err)
	}
	var completed int
	testkit.WaitFor(t, "two checkpoints completed at parallelism 2 and keyed state spilled into SST files", func() (bool, error) {
		var s testkit.CheckpointStats
		if err := testkit.GetJSON(context.Background(), r.track+"/jobs/"+jid+"/checkpoints", &s); err != nil {
			return false, err
		}
		completed = 0
		for _, h := range s.History {
			if h.Attempt == before.Attempt && h.Status == "COMPLETED" {
				completed++
			}
		}
		ssts, _ := filepath.Glob(filepath.Join(stateDir, "tide-pebble-*", "*.sst"))
		return completed >= 2 && len(ssts) > 0, fmt.Errorf("%d checkpoints completed in job attempt %d, %d SST files under %s",
			completed, before.Attempt, len(ssts), stateDir)
	})
	procs := containerProcesses(r.app, 1, "taskmanager")
	if len(procs) != 2 {
		t.Fatalf("TaskManager processes of attempt 1: %v, want 2", procs)
	}
	waitContainersReported(t, yarnSite(t, env), procs)
	killAM(t, r.app)
	killed := time.Now()
	t.Logf("AM of attempt 1 killed %s after submission, after %d completed checkpoints", killed.Sub(start).Round(time.Second), completed)
	track2 := waitAttempt2(t, env, r.app, r.track)
	waitYarnRunning(t, track2, jid, 2, nil)
	var after testkit.JobDetails
	if err := testkit.GetJSON(context.Background(), track2+"/jobs/"+jid, &after); err != nil {
		t.Fatal(err)
	}
	// Adoption is off, so whatever attempt AM attempt 2 runs restored a checkpoint. Its
	// number is not compared with before.Attempt: an AM killed before its state file named
	// the running deployment numbers its attempts from 1 again (CI on 1e53ef0, killed 6 s
	// after submission).
	if after.RestoreFrom == 0 {
		t.Fatalf("AM attempt 2 runs job attempt %d restored from no checkpoint (attempt 1 ran job attempt %d); want a restore from a checkpoint",
			after.Attempt, before.Attempt)
	}
	t.Logf("AM attempt 2 restored checkpoint %d at %s, %s after the kill", after.RestoreFrom, track2, time.Since(killed).Round(time.Second))
	r.wait(t, run.timeout)
	t.Logf("job finished %s after submission (%s after the kill)", time.Since(start).Round(time.Second), time.Since(killed).Round(time.Second))
	testkit.CheckExactOutput(t, out, jobArgs)

	// The new AM places the subtasks without knowing where they ran (the TaskManagers
	// report their kept subtasks, but a placement from scratch may swap them), so a
	// restore reads what its TaskManager kept and downloads the rest.
	local, downloaded, restores := containerRestoreBytes(t, containerLogs(env, r.app))
	t.Logf("%d restores on the TaskManagers: %d bytes from local state, %d downloaded", restores, local, downloaded)
}

// containerRestoreBytes adds up what the restores logged in files read locally and
// downloaded, and how many restores they logged.
func containerRestoreBytes(t *testing.T, files []string) (local, downloaded int64, restores int) {
	t.Helper()
	for _, p := range files {
		b, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		for _, m := range restoreLine.FindAllStringSubmatch(string(b), -1) {
			l, _ := strconv.ParseInt(m[1], 10, 64)
			d, _ := strconv.ParseInt(m[2], 10, 64)
			local += l
			downloaded += d
			restores++
		}
	}
	return local, downloaded, restores
}
