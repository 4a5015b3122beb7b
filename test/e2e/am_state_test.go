package e2e

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/tidestream/tide/examples"
	"github.com/tidestream/tide/internal/testkit"
	"github.com/tidestream/tide/standalone"
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

// amProcess finds the pid of the `tide jobmanager` serving REST on port.
func amProcess(port int) (int, bool) {
	cmds, _ := filepath.Glob("/proc/[0-9]*/cmdline")
	for _, p := range cmds {
		b, err := os.ReadFile(p)
		if err != nil {
			continue
		}
		args := strings.Split(string(b), "\x00")
		if len(args) > 1 && args[1] == "jobmanager" && slices.Contains(args, "rest.port="+strconv.Itoa(port)) {
			pid, _ := strconv.Atoi(filepath.Base(filepath.Dir(p)))
			return pid, true
		}
	}
	return 0, false
}

// A standalone AM SIGKILLed and started again on the same checkpoint directory (and
// ports, so the surviving TaskManager reconnects) shows the operator's 30-minute block
// with its end unchanged, the rescale and exception histories, the checkpoint counters and
// the job's start time of the killed AM.
func TestAMStateSurvivesStandaloneAMKill(t *testing.T) {
	ckpt, out := t.TempDir(), t.TempDir()
	rpcPort, err := standalone.FreePort()
	if err != nil {
		t.Fatal(err)
	}
	restPort, err := standalone.FreePort()
	if err != nil {
		t.Fatal(err)
	}
	dyn := reactive(ckpt, "200 ms")
	args := []string{"--records", "100000000", "--keys", "5", "--rate", "2000", "--output", out}
	c := startLocal(t, standalone.LocalOptions{Dynamic: dyn, JobName: examples.CheckableCountName, JobArgs: args,
		TaskManagers: 2, RPCPort: rpcPort, RESTPort: restPort})
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

	pid, ok := amProcess(restPort)
	if !ok {
		t.Fatal("no AM process found")
	}
	if err := syscall.Kill(pid, syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	<-c.AMDone()
	// The next attempt: the same command on the same directory and ports.
	amArgs := []string{"jobmanager"}
	for _, d := range dyn {
		amArgs = append(amArgs, "-D", d)
	}
	amArgs = append(amArgs, "-D", "jobmanager.rpc.address=127.0.0.1", "-D", "jobmanager.rpc.port="+strconv.Itoa(rpcPort),
		"-D", "rest.bind-address=127.0.0.1", "-D", "rest.port="+strconv.Itoa(restPort),
		"--job-classname", examples.CheckableCountName, "--")
	am2 := exec.Command(tideBin, append(amArgs, args...)...)
	log2, err := os.Create(filepath.Join(c.LogDir(), "jobmanager-2.log"))
	if err != nil {
		t.Fatal(err)
	}
	defer log2.Close()
	am2.Stdout, am2.Stderr = log2, log2
	if err := am2.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = am2.Process.Signal(syscall.SIGTERM)
		done := make(chan struct{})
		go func() { _ = am2.Wait(); close(done) }()
		select {
		case <-done:
		case <-time.After(10 * time.Second):
			_ = am2.Process.Kill()
			<-done
		}
	})
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
	r := startYarnRun(t, env, []string{"-Dyarn.application-attempts=2"}, jobArgs)
	jid := r.jobID(t)
	tms := waitYarnRunning(t, r.track, jid, 2, nil)
	blockFor30m(t, r.track, "node-outside-the-cluster")
	// A TaskManager killed: an exception and rescales; YARN gives a replacement.
	killAppTaskManager(t, r.app, tms[1].ID)
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

// killAppTaskManager SIGKILLs TaskManager id of app's first attempt. It looks only at
// app's containers: TaskManager ids repeat across applications on the shared cluster.
func killAppTaskManager(t *testing.T, app, id string) {
	t.Helper()
	var p tmProcess
	testkit.WaitFor(t, "the process of TaskManager "+id, func() (bool, error) {
		var ok bool
		p, ok = containerProcesses(app, 1, "taskmanager")[id]
		return ok, nil
	})
	if err := syscall.Kill(p.PID, syscall.SIGKILL); err != nil {
		t.Fatalf("killing TaskManager %s (pid %d): %v", id, p.PID, err)
	}
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
