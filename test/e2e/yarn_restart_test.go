package e2e

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/tidestream/tide/internal/testkit"
	"github.com/tidestream/tide/storage"
	"github.com/tidestream/tide/test/hadoop/hadooptest"
	"github.com/tidestream/tide/yarn"
)

// TestYARNAMRestart kills the AM container after a checkpoint: YARN starts attempt 2,
// which recovers the job from the newest checkpoint on HDFS on the very TaskManager
// processes of attempt 1 (YARN keeps their containers; they find the new AM through the
// address file in the staging directory), the output is exact and the staging directory
// is gone once the job has finished.
func TestYARNAMRestart(t *testing.T) {
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
		// test/hadoop's launcher allows two; a cluster that allows one cannot run this test,
		// and passing it without a second attempt would hide exactly what it checks.
		t.Fatalf("the mini-cluster caps AM attempts at yarn.resourcemanager.am.max-attempts=%q: no second attempt possible", site["yarn.resourcemanager.am.max-attempts"])
	}
	out := t.TempDir()
	jobArgs := []string{"--records", "200000", "--keys", "7", "--rate", "4000", "--output", out}
	r := startYarnRun(t, env, []string{"-Dyarn.application-attempts=2"}, jobArgs)
	jid := r.jobID(t)
	before := waitYarnRunning(t, r.track, jid, 2, nil)
	waitYarnCheckpoint(t, r.track, jid)
	procs := containerProcesses(r.app, 1, "taskmanager")
	if len(procs) != 2 {
		t.Fatalf("TaskManager processes of attempt 1: %v, want 2", procs)
	}
	for _, tm := range before {
		if _, ok := procs[tm.ID]; !ok {
			t.Fatalf("TaskManager %s registered but has no process in a container of attempt 1 (%v)", tm.ID, procs)
		}
	}
	waitContainersReported(t, site, procs)
	killAM(t, r.app)
	track2 := waitAttempt2(t, env, r.app, r.track)
	after := waitYarnRunning(t, track2, jid, 2, nil)
	for _, tm := range after {
		if _, ok := procs[tm.ID]; !ok {
			t.Fatalf("attempt 2 runs on TaskManager %s, want only those of attempt 1 %v", tm.ID, procs)
		}
	}
	now := containerProcesses(r.app, 1, "taskmanager")
	if !reflect.DeepEqual(now, procs) {
		t.Fatalf("TaskManager processes of attempt 1 now %v, want the same as before the AM died %v", now, procs)
	}
	if fresh := containerProcesses(r.app, 2, "taskmanager"); len(fresh) != 0 {
		t.Fatalf("attempt 2 started TaskManagers %v: the kept containers were not reused", fresh)
	}
	t.Logf("attempt 2 at %s runs on the TaskManagers of attempt 1: %v", track2, procs)
	r.wait(t, 3*time.Minute)
	rep, err := appReport(env, r.app)
	if err != nil {
		t.Fatal(err)
	}
	if a := rep.GetCurrentApplicationAttemptId().GetAttemptId(); a != 2 {
		t.Fatalf("the application finished in attempt %d, want 2", a)
	}
	testkit.CheckExactOutput(t, out, jobArgs)
	<-r.drained
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	dir, st := openStaging(ctx, t, r)
	if !strings.Contains(r.out.String(), "Staging directory "+dir+" removed") {
		t.Fatalf("tide run did not report the staging directory %s removed:\n%s", dir, r.out.String())
	}
	if _, err := st.Stat(ctx, r.app); !errors.Is(err, storage.ErrNotFound) {
		t.Fatalf("staging directory %s after the job finished: %v, want it gone", dir, err)
	}
}

var stagingRE = regexp.MustCompile(`Submitted application \S+ \(staging (\S+)\)`)

// tmProcess is a process in one of the application's containers.
type tmProcess struct {
	PID       int
	Container string
}

// containerProcesses maps the --resource-id of every process running `tide role` in a
// container of app's attempt to its pid and container id.
func containerProcesses(app string, attempt int, role string) map[string]tmProcess {
	prefix := fmt.Sprintf("container_%s_%02d_", strings.TrimPrefix(app, "application_"), attempt)
	out := map[string]tmProcess{}
	for _, p := range testkit.Processes() {
		if p.Role() != role {
			continue
		}
		container, _ := p.Env("CONTAINER_ID")
		if !strings.HasPrefix(container, prefix) {
			continue
		}
		if id, ok := p.Flag("--resource-id"); ok {
			out[id] = tmProcess{PID: p.PID, Container: container}
		}
	}
	return out
}

// waitAttempt2 waits until app's second attempt has registered and returns its AM's REST
// address (not old, the first attempt's).
func waitAttempt2(t *testing.T, env *hadooptest.Env, app, old string) string {
	t.Helper()
	return waitAttempt(t, env, app, 2, old)
}

// waitAttempt waits until app's attempt n has registered and returns its AM's REST
// address (not old, the previous attempt's).
func waitAttempt(t *testing.T, env *hadooptest.Env, app string, n int32, old string) string {
	t.Helper()
	var track string
	testkit.WaitFor(t, fmt.Sprintf("the AM of attempt %d", n), func() (bool, error) {
		rep, err := appReport(env, app)
		if err != nil {
			return false, err
		}
		u := rep.GetOriginalTrackingUrl()
		if a := rep.GetCurrentApplicationAttemptId().GetAttemptId(); a != n || u == "" || u == "N/A" {
			return false, fmt.Errorf("attempt %d (state %s), tracking URL %q", a, rep.GetYarnApplicationState(), u)
		}
		if !strings.Contains(u, "://") {
			u = "http://" + u
		}
		track = strings.TrimRight(u, "/")
		return track != old, fmt.Errorf("tracking URL still %s", track)
	})
	return track
}

// killAM SIGKILLs the AM process of app's first attempt (its container ends).
func killAM(t *testing.T, app string) {
	t.Helper()
	killAMOf(t, app, 1)
}

// killAMOf SIGKILLs the AM process of app's attempt n (its container ends).
func killAMOf(t *testing.T, app string, n int) {
	t.Helper()
	prefix := fmt.Sprintf("container_%s_%02d_", strings.TrimPrefix(app, "application_"), n)
	for _, p := range testkit.Processes() {
		if c, _ := p.Env("CONTAINER_ID"); p.Role() == "jobmanager" && strings.HasPrefix(c, prefix) {
			if err := syscall.Kill(p.PID, syscall.SIGKILL); err != nil {
				t.Fatalf("killing the AM of %s attempt %d (pid %d): %v", app, n, p.PID, err)
			}
			return
		}
	}
	t.Fatalf("no AM process of %s attempt %d", app, n)
}

// waitContainersReported waits until the RM has seen every process's container RUNNING.
// YARN keeps a container across AM attempts only then, and it learns it from the
// NodeManager's next heartbeat after the process started; a container the RM still holds
// as ACQUIRED dies with attempt 1 ("Container of a completed application"). No client API
// shows that transition (a container report says RUNNING from allocation on), so the
// condition is each process's age: three NodeManager heartbeats since it started. A
// process that has run that long already (the usual case) costs no wait.
func waitContainersReported(t *testing.T, site map[string]string, procs map[string]tmProcess) {
	t.Helper()
	nmBeat := time.Second
	if ms, err := strconv.Atoi(site["yarn.resourcemanager.nodemanagers.heartbeat-interval-ms"]); err == nil && ms > 0 {
		nmBeat = time.Duration(ms) * time.Millisecond
	}
	testkit.WaitFor(t, "every TaskManager container reported to the RM", func() (bool, error) {
		for id, p := range procs {
			age, err := processAge(p.PID)
			if err != nil {
				return false, fmt.Errorf("TaskManager %s: %w", id, err)
			}
			if age < 3*nmBeat {
				return false, fmt.Errorf("TaskManager %s (container %s) started %s ago, want %s", id, p.Container, age, 3*nmBeat)
			}
		}
		return true, nil
	})
}

// processAge is how long process pid has run, from its start time in /proc/<pid>/stat
// (clock ticks after boot, 100 per second on Linux) and the boot time in /proc/stat.
func processAge(pid int) (time.Duration, error) {
	stat, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return 0, err
	}
	// Fields after the command name (which may hold spaces) start at the state, field 3;
	// starttime is field 22.
	i := strings.LastIndexByte(string(stat), ')')
	fields := strings.Fields(string(stat)[i+1:])
	if i < 0 || len(fields) < 20 {
		return 0, fmt.Errorf("/proc/%d/stat: unexpected %q", pid, stat)
	}
	ticks, err := strconv.ParseInt(fields[19], 10, 64)
	if err != nil {
		return 0, fmt.Errorf("/proc/%d/stat: starttime: %w", pid, err)
	}
	procStat, err := os.ReadFile("/proc/stat")
	if err != nil {
		return 0, err
	}
	var boot int64
	for _, l := range strings.Split(string(procStat), "\n") {
		if v, ok := strings.CutPrefix(l, "btime "); ok {
			boot, err = strconv.ParseInt(strings.TrimSpace(v), 10, 64)
			if err != nil {
				return 0, fmt.Errorf("/proc/stat: btime: %w", err)
			}
		}
	}
	if boot == 0 {
		return 0, fmt.Errorf("/proc/stat has no btime")
	}
	const ticksPerSecond = 100
	start := time.Unix(boot, 0).Add(time.Duration(ticks) * time.Second / ticksPerSecond)
	return time.Since(start), nil
}

// TestProcessAge checks the age waitContainersReported reads against a process this test
// starts: never negative, never more than the time since it was started.
func TestProcessAge(t *testing.T) {
	before := time.Now()
	cmd := exec.Command("sleep", "30")
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { _ = cmd.Process.Kill(); _ = cmd.Wait() }()
	age, err := processAge(cmd.Process.Pid)
	if err != nil {
		t.Fatal(err)
	}
	// Start times have a resolution of one clock tick (10 ms), boot time of one second.
	if limit := time.Since(before) + time.Second + 10*time.Millisecond; age < -time.Second || age > limit {
		t.Fatalf("age of a process started %s ago = %s", time.Since(before), age)
	}
	if _, err := processAge(1 << 30); err == nil {
		t.Fatal("age of a process that does not exist: no error")
	}
}
