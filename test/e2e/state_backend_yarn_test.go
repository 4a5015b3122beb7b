package e2e

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/tidestream/tide/internal/testkit"
)

// yarnPebbleRun sizes one run of TestStateBackendYARNAMKill: CheckableCount --dedup with
// one key per number (two keyed state entries per number) at parallelism 2 on YARN.
type yarnPebbleRun struct {
	records int64
	keys    int64  // --keys (0: records)
	rate    string // per source subtask
	timeout time.Duration
	managed string // taskmanager.memory.managed.size
	process string // taskmanager.memory.process.size (empty: yarnSettings' 256 mb)
	// hold: the AM is killed only once the dedup step has taken in this many numbers (as
	// many distinct keys in keyed state) and a checkpoint triggered after that completed
	// (0: after two checkpoints).
	hold     int64
	interval string   // execution.checkpointing.interval (empty: yarnSettings' 300 ms)
	extra    []string // more -D settings
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
	n, k := strconv.FormatInt(run.records, 10), strconv.FormatInt(run.records, 10)
	if run.keys > 0 {
		k = strconv.FormatInt(run.keys, 10)
	}
	jobArgs := []string{"--records", n, "--keys", k, "--dedup", "--rate", run.rate, "--output", out}
	extra := []string{"-Dyarn.application-attempts=2", "-Djobmanager.failover.task-adoption.timeout=0",
		"-Dstate.backend.type=pebble", "-Dexecution.checkpointing.incremental=true", "-Dstate.backend.local-recovery=true",
		"-Dstate.backend.pebble.localdir=" + stateDir, "-Dtaskmanager.memory.managed.size=" + run.managed}
	if run.process != "" {
		extra = append(extra, "-Dtaskmanager.memory.process.size="+run.process)
	}
	if run.interval != "" {
		extra = append(extra, "-Dexecution.checkpointing.interval="+run.interval)
	}
	extra = append(extra, run.extra...)
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
	if run.hold > 0 {
		waitKeysInState(t, r.track, jid, run.hold, run.timeout)
	}
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

// waitKeysInState waits until the dedup step of job id (base: its AM's REST URL) has
// taken in at least keys numbers in the job's current attempt — CheckableCount --dedup
// keeps one MapState key per number, so that many distinct keys are in keyed state —
// and then for a completed checkpoint triggered after that, so a restore from the
// latest checkpoint restores them all. It logs the records/s the job reached meanwhile.
// The deadline only guards against a hang.
func waitKeysInState(t *testing.T, base, id string, keys int64, deadline time.Duration) {
	t.Helper()
	end := time.Now().Add(deadline)
	start := time.Now()
	first, err := dedupRecordsIn(base, id)
	if err != nil {
		first = 0
	}
	var n int64
	for {
		n, err = dedupRecordsIn(base, id)
		if err == nil && n >= keys {
			break
		}
		if time.Now().After(end) {
			t.Fatalf("after %s the dedup step of job %s has taken in %d numbers (%v), want %d", deadline, id, n, err, keys)
		}
		time.Sleep(2 * time.Second)
	}
	took := time.Since(start)
	t.Logf("dedup took in %d numbers (that many distinct keys in state) %s after the wait began: %.0f records/s over %d records",
		n, took.Round(time.Second), float64(n-first)/took.Seconds(), n-first)
	var s testkit.CheckpointStats
	if err := testkit.GetJSON(t.Context(), base+"/jobs/"+id+"/checkpoints", &s); err != nil {
		t.Fatal(err)
	}
	// Checkpoints numbered up to seen (and seen+1, if it was triggered but not yet listed)
	// may hold fewer keys.
	var seen int64
	for _, h := range s.History {
		seen = max(seen, h.ID)
	}
	if s.Latest.Completed != nil {
		seen = max(seen, s.Latest.Completed.ID)
	}
	for {
		if err := testkit.GetJSON(t.Context(), base+"/jobs/"+id+"/checkpoints", &s); err != nil {
			t.Fatal(err)
		}
		if c := s.Latest.Completed; c != nil && c.ID > seen+1 {
			t.Logf("checkpoint %d completed with at least %d distinct keys in state", c.ID, keys)
			return
		}
		if time.Now().After(end) {
			t.Fatalf("no checkpoint after %d completed within %s", seen+1, deadline)
		}
		time.Sleep(time.Second)
	}
}

// dedupRecordsIn adds up the dedup step's numRecordsIn over its subtasks, from the AM's
// Prometheus metrics.
func dedupRecordsIn(base, id string) (int64, error) {
	ctx, cancel := context.WithTimeout(context.Background(), testkit.RequestTimeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, base+"/metrics", nil)
	if err != nil {
		return 0, err
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return 0, fmt.Errorf("GET %s/metrics: %w", base, err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		b, _ := io.ReadAll(resp.Body)
		return 0, fmt.Errorf("GET %s/metrics: %s: %s", base, resp.Status, b)
	}
	var sum float64
	var found bool
	sc := bufio.NewScanner(resp.Body)
	for sc.Scan() {
		line := sc.Text()
		if !strings.HasPrefix(line, "tide_jobmanager_job_task_numRecordsIn{") ||
			!strings.Contains(line, `job_id="`+id+`"`) || !strings.Contains(line, `vertex="dedup"`) {
			continue
		}
		v, err := strconv.ParseFloat(line[strings.LastIndexByte(line, ' ')+1:], 64)
		if err != nil {
			return 0, fmt.Errorf("metrics line %q: %w", line, err)
		}
		sum += v
		found = true
	}
	if err := sc.Err(); err != nil {
		return 0, fmt.Errorf("reading %s/metrics: %w", base, err)
	}
	if !found {
		return 0, fmt.Errorf("%s/metrics has no numRecordsIn of job %s's dedup step yet", base, id)
	}
	return int64(sum), nil
}
