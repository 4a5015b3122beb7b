package e2e

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"syscall"
	"testing"
	"time"

	"github.com/tidestream/tide/examples"
	"github.com/tidestream/tide/internal/testkit"
	"github.com/tidestream/tide/storage"
	"github.com/tidestream/tide/test/hadoop/hadooptest"
	"github.com/tidestream/tide/yarn"
)

// amStateView is the AM state an operator sees over REST that must survive a failover.
type amStateView struct {
	StartTime  int64
	Blocked    map[string][2]int64 // node -> start, end (unix ms)
	Rescales   []int
	Exceptions []int64 // timestamps
	Completed  int64
	Restored   int64
}

func readAMStateView(get testkit.Getter, jid string) (amStateView, error) {
	var v amStateView
	var job struct {
		StartTime int64 `json:"start-time"`
	}
	var blocked map[string]struct {
		Start int64 `json:"startTimestamp,string"`
		End   int64 `json:"endTimestamp,string"`
	}
	var rescales struct {
		Rescales []struct {
			ID int `json:"id"`
		} `json:"rescales"`
	}
	var exc struct {
		ExceptionHistory struct {
			Entries []struct {
				Timestamp int64 `json:"timestamp"`
			} `json:"entries"`
		} `json:"exceptionHistory"`
	}
	var ck testkit.CheckpointStats
	for path, dst := range map[string]any{"/jobs/" + jid: &job, "/blocklist": &blocked, "/jobs/" + jid + "/rescales": &rescales,
		"/jobs/" + jid + "/exceptions": &exc, "/jobs/" + jid + "/checkpoints": &ck} {
		if err := get(path, dst); err != nil {
			return v, err
		}
	}
	v.StartTime, v.Completed, v.Restored = job.StartTime, ck.Counts.Completed, ck.Counts.Restored
	v.Blocked = map[string][2]int64{}
	for id, b := range blocked {
		v.Blocked[id] = [2]int64{b.Start, b.End}
	}
	for _, r := range rescales.Rescales {
		v.Rescales = append(v.Rescales, r.ID)
	}
	for _, e := range exc.ExceptionHistory.Entries {
		v.Exceptions = append(v.Exceptions, e.Timestamp)
	}
	return v, nil
}

// survived checks that after (the next AM attempt) still shows what before (the killed
// one) showed: start time, blocked nodes with their ends, rescales, exceptions and at least
// as many completed checkpoints.
func survived(t *testing.T, before, after amStateView) {
	t.Helper()
	if after.StartTime != before.StartTime {
		t.Errorf("start time %d, want %d of the killed attempt", after.StartTime, before.StartTime)
	}
	for id, b := range before.Blocked {
		if after.Blocked[id] != b {
			t.Errorf("blocked node %s: %v, want %v (start, end) as before", id, after.Blocked[id], b)
		}
	}
	for _, id := range before.Rescales {
		if !slices.Contains(after.Rescales, id) {
			t.Errorf("rescale %d of the killed attempt missing: %v", id, after.Rescales)
		}
	}
	for _, ts := range before.Exceptions {
		if !slices.Contains(after.Exceptions, ts) {
			t.Errorf("exception at %d of the killed attempt missing: %v", ts, after.Exceptions)
		}
	}
	if after.Completed < before.Completed || after.Restored < 1 {
		t.Errorf("checkpoints: %d completed, %d restored; want at least the %d completed before, and a restore",
			after.Completed, after.Restored, before.Completed)
	}
}

// blockFor30m blocks node over REST for 30 minutes, as an operator would.
func blockFor30m(t *testing.T, base, node string) {
	t.Helper()
	end := time.Now().Add(30 * time.Minute).UnixMilli()
	if err := sendJSON(http.MethodPut, base+"/blocklist/nodes/"+node,
		fmt.Sprintf(`{"action":"MARK_BLOCKED","endTimestamp":"%d","cause":"bad disk"}`, end), http.StatusCreated); err != nil {
		t.Fatal(err)
	}
}

// persistedCounts are the sizes of what the AM persisted in its _am_state file.
type persistedCounts struct {
	Blocklist   []json.RawMessage `json:"blocklist"`
	Rescales    []json.RawMessage `json:"rescales"`
	Exceptions  []json.RawMessage `json:"exceptions"`
	Checkpoints struct {
		Counts struct {
			Completed int64 `json:"completed"`
		} `json:"counts"`
	} `json:"checkpoints"`
}

// waitPersisted waits until the AM shows what the test did (ok) and its _am_state file
// (read by readFile) holds as many blocked nodes, rescales and exceptions as REST shows: a
// crash from then on cannot lose them. The view returned counts the completed checkpoints
// the file holds (the counters are persisted after the fact, so REST may be ahead).
func waitPersisted(t *testing.T, get testkit.Getter, jid string, ok func(amStateView) bool, readFile func() ([]byte, error)) amStateView {
	t.Helper()
	var v amStateView
	testkit.WaitFor(t, "the AM state shown and persisted", func() (bool, error) {
		var err error
		if v, err = readAMStateView(get, jid); err != nil {
			return false, err
		}
		if !ok(v) {
			return false, fmt.Errorf("state %+v", v)
		}
		data, err := readFile()
		if err != nil {
			return false, err
		}
		var p persistedCounts
		if err := json.Unmarshal(data, &p); err != nil {
			return false, err
		}
		v.Completed = p.Checkpoints.Counts.Completed
		return len(p.Blocklist) == len(v.Blocked) && len(p.Rescales) == len(v.Rescales) && len(p.Exceptions) == len(v.Exceptions),
			fmt.Errorf("persisted %d blocked, %d rescales, %d exceptions; shown %+v", len(p.Blocklist), len(p.Rescales), len(p.Exceptions), v)
	})
	return v
}

// A standalone AM SIGKILLed and started again on the same checkpoint directory (and
// ports, so the surviving TaskManager reconnects) shows the operator's 30-minute block
// with its end unchanged, the rescale and exception histories, the checkpoint counters and
// the job's start time of the killed AM.
func TestAMStateSurvivesStandaloneAMKill(t *testing.T) {
	ckpt, out := t.TempDir(), t.TempDir()
	args := []string{"--records", "100000000", "--keys", "5", "--rate", "2000", "--output", out}
	c, am := startAMRestartCluster(t, append(reactive(ckpt, "200 ms"), "jobmanager.failover.task-adoption.timeout=0"), examples.CheckableCountName, args, 2)
	jid := jobID(t, c)
	waitRunningAt(t, c, jid, 2)
	base := "http://" + c.RESTAddress()
	blockFor30m(t, base, "local-99")
	if err := c.Signal("tm-2", syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	waitRunningAt(t, c, jid, 1)
	before := waitPersisted(t, restOf(c), jid, func(v amStateView) bool {
		return len(v.Blocked) == 1 && len(v.Rescales) >= 2 && len(v.Exceptions) >= 1 && v.Completed >= 3
	}, func() ([]byte, error) { return os.ReadFile(filepath.Join(ckpt, jid, "_am_state")) })

	am.Kill(t)
	am.Start(t, 2)
	waitRunningAt(t, c, jid, 1)
	after, err := readAMStateView(restOf(c), jid)
	if err != nil {
		t.Fatal(err)
	}
	survived(t, before, after)
	if _, err := os.Stat(filepath.Join(ckpt, jid, "_am_state")); err != nil {
		t.Errorf("persisted AM state: %v", err)
	}
}

// On YARN, the AM SIGKILLed: attempt 2 shows the operator's block, the rescale and
// exception histories, the checkpoint counters and the start time of attempt 1 (persisted
// on HDFS beside the checkpoints).
func TestAMStateSurvivesYARNAMKill(t *testing.T) {
	env := requireYARNAttempts(t)
	out := t.TempDir()
	jobArgs := []string{"--records", "100000000", "--keys", "7", "--rate", "2000", "--output", out}
	r := startYarnRun(t, env, []string{"-Dyarn.application-attempts=2", "-Djobmanager.failover.task-adoption.timeout=0"}, jobArgs)
	jid := r.jobID(t)
	tms := waitYarnRunning(t, r.track, jid, 2, nil)
	blockFor30m(t, r.track, "node-outside-the-cluster")
	// A TaskManager killed: an exception and rescales; YARN gives a replacement.
	killTaskManager(t, r.app, tms[1].ID)
	waitYarnRunning(t, r.track, jid, 2, map[string]bool{tms[1].ID: true})
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	_, staging := openStaging(ctx, t, r)
	before := waitPersisted(t, testkit.RESTGetter(r.track), jid, func(v amStateView) bool {
		return len(v.Blocked) == 1 && len(v.Rescales) >= 2 && len(v.Exceptions) >= 1 && v.Completed >= 3
	}, func() ([]byte, error) {
		return storage.ReadFile(ctx, staging, r.app+"/checkpoints/"+jid+"/_am_state")
	})
	procs := containerProcesses(r.app, 1, "taskmanager")
	waitContainersReported(t, yarnSite(t, env), procs)
	killAM(t, r.app)
	track2 := waitAttempt2(t, env, r.app, r.track)
	waitYarnRunning(t, track2, jid, 2, nil)
	after, err := readAMStateView(testkit.RESTGetter(track2), jid)
	if err != nil {
		t.Fatal(err)
	}
	survived(t, before, after)
}

// requireYARNAttempts is hadooptest.RequireYARN for a test that needs a second AM attempt.
func requireYARNAttempts(t *testing.T) *hadooptest.Env {
	t.Helper()
	env := hadooptest.RequireYARN(t)
	if n, _ := strconv.Atoi(yarnSite(t, env)["yarn.resourcemanager.am.max-attempts"]); n < 2 {
		t.Fatalf("the mini-cluster caps AM attempts at yarn.resourcemanager.am.max-attempts=%d: no second attempt possible", n)
	}
	return env
}

// yarnSite is the mini-cluster's yarn-site.xml.
func yarnSite(t *testing.T, env *hadooptest.Env) map[string]string {
	t.Helper()
	f, err := os.Open(filepath.Join(env.ConfDir, "yarn-site.xml"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	site, err := yarn.ParseSite(f)
	if err != nil {
		t.Fatal(err)
	}
	return site
}
