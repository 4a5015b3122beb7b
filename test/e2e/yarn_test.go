package e2e

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/tidestream/tide/api"
	"github.com/tidestream/tide/examples"
	"github.com/tidestream/tide/internal/testkit"
	"github.com/tidestream/tide/storage"
	"github.com/tidestream/tide/test/hadoop/hadooptest"
	"github.com/tidestream/tide/yarn"
	"github.com/tidestream/tide/yarn/yarnpb"
)

// yarnSettings are the -D settings of the YARN tests: reactive up to two TaskManagers
// (one slot each), node ids host:port (the MiniYARNCluster's NodeManagers share a host),
// fast heartbeats, small containers, checkpoints every 300 ms on HDFS (the default under
// the staging directory).
func yarnSettings() []string {
	return []string{
		"-Dexecution-mode=reactive",
		"-Dslotmanager.number-of-slots.max=2",
		"-Dtaskmanager.numberOfTaskSlots=1",
		"-Dtide.yarn.node-id-format=host-port",
		"-Dyarn.heartbeat.interval=1 s",
		"-Dyarn.heartbeat.container-request-interval=200 ms",
		"-Djobmanager.memory.process.size=256 mb",
		"-Dtaskmanager.memory.process.size=256 mb",
		"-Dexecution.checkpointing.interval=300 ms",
		"-Djobmanager.adaptive-scheduler.executing.cooldown-after-rescaling=0 s",
		"-Djobmanager.adaptive-scheduler.executing.resource-stabilization-timeout=0 s",
		"-Drestart-strategy.type=fixed-delay",
		"-Drestart-strategy.fixed-delay.attempts=1000",
		"-Drestart-strategy.fixed-delay.delay=10 ms",
		"-Dheartbeat.timeout=30 min",
	}
}

// yarnRunArgs are the arguments of `tide run` submitting CheckableCount with
// yarnSettings, then extra, and jobArgs for the job.
func yarnRunArgs(extra, jobArgs []string) []string {
	return yarnJobArgs(examples.CheckableCountName, extra, jobArgs)
}

// yarnJobArgs is yarnRunArgs for job.
func yarnJobArgs(job string, extra, jobArgs []string) []string {
	args := append([]string{"run", "--target", "yarn-per-job", "--job-classname", job}, yarnSettings()...)
	args = append(append(args, extra...), "--")
	return append(args, jobArgs...)
}

// lockedBuffer is a bytes.Buffer safe to read while a process's output still arrives (it
// can be an exec.Cmd's Stdout/Stderr).
type lockedBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *lockedBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *lockedBuffer) WriteString(s string) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.WriteString(s)
}

func (b *lockedBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

// hadoopEnv is this process's environment pointing the tide client at the mini-cluster.
func hadoopEnv(env *hadooptest.Env) []string {
	return append(os.Environ(), "HADOOP_CONF_DIR="+env.ConfDir)
}

// yarnRun is one `tide run --target yarn-per-job` process.
type yarnRun struct {
	cmd  *exec.Cmd
	out  *lockedBuffer
	done chan error
	// drained is closed once every output line is in out (after the process exited).
	drained chan struct{}
	app     string
	track   string
}

var (
	submittedRE = regexp.MustCompile(`Submitted application (application_\d+_\d+)`)
	runningRE   = regexp.MustCompile(`Job RUNNING (\S+) after tide run; tracking URL (\S+)`)
)

// startYarnRun submits CheckableCount and waits for the "Job RUNNING" line.
func startYarnRun(t *testing.T, env *hadooptest.Env, extra []string, jobArgs []string) *yarnRun {
	t.Helper()
	return startYarnJob(t, env, examples.CheckableCountName, extra, jobArgs)
}

// startYarnJob is startYarnRun for job.
func startYarnJob(t *testing.T, env *hadooptest.Env, job string, extra []string, jobArgs []string) *yarnRun {
	t.Helper()
	cmd := exec.Command(tideBin, yarnJobArgs(job, extra, jobArgs)...)
	cmd.Env = hadoopEnv(env)
	pr, pw := io.Pipe()
	r := &yarnRun{cmd: cmd, out: &lockedBuffer{}, done: make(chan error, 1), drained: make(chan struct{})}
	cmd.Stdout, cmd.Stderr = pw, pw
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() { err := cmd.Wait(); pw.Close(); r.done <- err }()
	lines := make(chan string, 256)
	go func() {
		defer close(lines)
		sc := bufio.NewScanner(pr)
		for sc.Scan() {
			lines <- sc.Text()
		}
	}()
	t.Cleanup(func() {
		if r.app != "" {
			killApp(t, env, r.app)
		}
		_ = cmd.Process.Kill()
		if t.Failed() {
			t.Logf("---- tide run output\n%s", r.out.String())
			dumpContainerLogs(t, env, r.app)
		}
	})
	deadline := time.After(90 * time.Second)
	for {
		select {
		case l, ok := <-lines:
			if !ok {
				t.Fatalf("tide run ended before the job ran:\n%s", r.out.String())
			}
			r.out.WriteString(l + "\n")
			if m := submittedRE.FindStringSubmatch(l); m != nil {
				r.app = m[1]
			}
			if m := runningRE.FindStringSubmatch(l); m != nil {
				r.track = m[2]
				go func() {
					defer close(r.drained)
					for l := range lines {
						r.out.WriteString(l + "\n") // only read after done
					}
				}()
				return r
			}
		case <-deadline:
			t.Fatalf("the job did not reach RUNNING:\n%s", r.out.String())
		}
	}
}

// jobID is the id of the one job the run's AM serves.
func (r *yarnRun) jobID(t *testing.T) string {
	t.Helper()
	ids, err := testkit.JobIDs(testkit.RESTGetter(r.track))
	if err != nil || len(ids) != 1 {
		t.Fatalf("jobs of %s at %s: %v %v, want one", r.app, r.track, err, ids)
	}
	return ids[0]
}

// wait waits up to timeout for tide run to exit, which it must do successfully.
func (r *yarnRun) wait(t *testing.T, timeout time.Duration) {
	t.Helper()
	select {
	case err := <-r.done:
		if err != nil {
			t.Fatalf("tide run: %v", err)
		}
	case <-time.After(timeout):
		t.Fatalf("tide run of %s did not exit: the job did not finish", r.app)
	}
}

// openStaging opens the parent of the staging directory tide run named, closed when the
// test ends; app's staging directory is r.app under it.
func openStaging(ctx context.Context, t *testing.T, r *yarnRun) (dir string, st storage.Storage) {
	t.Helper()
	m := stagingRE.FindStringSubmatch(r.out.String())
	if m == nil {
		t.Fatalf("tide run did not name the staging directory:\n%s", r.out.String())
	}
	st, err := storage.Open(ctx, strings.TrimSuffix(m[1], "/"+r.app), storage.Options{User: currentUser()})
	if err != nil {
		t.Fatalf("open the staging directory %s: %v", m[1], err)
	}
	t.Cleanup(func() { st.Close() })
	return m[1], st
}

// dialRM connects to the mini-cluster's ResourceManager as the tide client would and
// parses app; the caller closes the client.
func dialRM(env *hadooptest.Env, app string) (*yarn.ClientRM, *yarnpb.ApplicationIdProto, error) {
	id, err := yarn.ParseApplicationID(app)
	if err != nil {
		return nil, nil, err
	}
	rm, err := yarn.DialClientRM(env.YARNResourceManager, currentUser(), nil)
	if err != nil {
		return nil, nil, fmt.Errorf("dial the ResourceManager %s for %s: %w", env.YARNResourceManager, app, err)
	}
	return rm, id, nil
}

// appReport reads app's report from the ResourceManager.
func appReport(env *hadooptest.Env, app string) (*yarnpb.ApplicationReportProto, error) {
	rm, id, err := dialRM(env, app)
	if err != nil {
		return nil, err
	}
	defer rm.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	rep, err := rm.GetApplicationReport(ctx, id)
	if err != nil {
		return nil, fmt.Errorf("report of %s: %w", app, err)
	}
	return rep, nil
}

func killApp(t *testing.T, env *hadooptest.Env, app string) {
	rm, id, err := dialRM(env, app)
	if err != nil {
		t.Logf("killing %s: %v", app, err)
		return
	}
	defer rm.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	_, _ = rm.ForceKillApplication(ctx, id, "e2e test cleanup")
	// YARN stops the containers after the kill returns: wait until their processes are
	// gone, so nothing writes into the test's temp dirs while they are removed.
	for deadline := time.Now().Add(30 * time.Second); ; time.Sleep(200 * time.Millisecond) {
		left := appProcesses(app)
		if len(left) == 0 {
			return
		}
		if time.Now().After(deadline) {
			t.Logf("killing %s: processes still running 30 s after the kill: %v", app, left)
			return
		}
	}
}

// appProcesses are the pids of the processes running in any container of app.
func appProcesses(app string) []int {
	prefix := "container_" + strings.TrimPrefix(app, "application_") + "_"
	var pids []int
	for _, p := range testkit.Processes() {
		if c, _ := p.Env("CONTAINER_ID"); strings.HasPrefix(c, prefix) {
			pids = append(pids, p.PID)
		}
	}
	return pids
}

// currentUser is the Hadoop user the way the tide client picks it: HADOOP_USER_NAME, else
// the OS user (USER is not set in every environment, CI's included).
func currentUser() string {
	if u := os.Getenv("HADOOP_USER_NAME"); u != "" {
		return u
	}
	if u, err := user.Current(); err == nil {
		return u.Username
	}
	return os.Getenv("USER")
}

// dumpContainerLogs prints the tail of every container log of app.
func dumpContainerLogs(t *testing.T, env *hadooptest.Env, app string) {
	if app == "" {
		return
	}
	for _, f := range containerLogs(env, app) {
		b, _ := os.ReadFile(f)
		lines := strings.Split(string(b), "\n")
		if len(lines) > 40 {
			lines = lines[len(lines)-40:]
		}
		t.Logf("---- %s\n%s", f, strings.Join(lines, "\n"))
	}
}

// containerLogs lists the log files of app's containers under the NodeManagers' log
// dirs (MiniYARNCluster keeps them under <base>/target/…/*-logDir-*/<app>/<container>/).
// The local dirs beside them (localized binary, launch scripts, container tokens holding
// the internal secret) are left out: nothing there belongs in a test's output.
func containerLogs(env *hadooptest.Env, app string) []string {
	var out []string
	_ = filepath.WalkDir(filepath.Join(filepath.Dir(env.Path), "target"), func(p string, d os.DirEntry, err error) error {
		if err == nil && !d.IsDir() && filepath.Base(filepath.Dir(filepath.Dir(p))) == app &&
			strings.Contains(filepath.Base(filepath.Dir(filepath.Dir(filepath.Dir(p)))), "-logDir-") {
			out = append(out, p)
		}
		return nil
	})
	return out
}

// sendJSON makes one request with a JSON body to url and expects status want.
func sendJSON(method, url, body string, want int) error {
	ctx, cancel := context.WithTimeout(context.Background(), testkit.RequestTimeout)
	defer cancel()
	code, _, b, err := testkit.Send(ctx, method, url, body, "Content-Type", "application/json")
	if err != nil {
		return err
	}
	if code != want {
		return fmt.Errorf("%s %s: %d: %s", method, url, code, b)
	}
	return nil
}

type tmInfo struct {
	ID   string `json:"id"`
	Node string `json:"node"`
}

func taskManagers(track string) ([]tmInfo, error) {
	var v struct {
		TaskManagers []tmInfo `json:"taskmanagers"`
	}
	err := testkit.GetJSON(context.Background(), track+"/taskmanagers", &v)
	return v.TaskManagers, err
}

// waitYarnCheckpoint waits until the job at the AM's REST address track has completed a
// checkpoint.
func waitYarnCheckpoint(t *testing.T, track, jid string) {
	t.Helper()
	testkit.WaitFor(t, "a completed checkpoint", func() (bool, error) {
		var s testkit.CheckpointStats
		if err := testkit.GetJSON(context.Background(), track+"/jobs/"+jid+"/checkpoints", &s); err != nil {
			return false, err
		}
		return s.Counts.Completed > 0, fmt.Errorf("%d completed", s.Counts.Completed)
	})
}

// waitYarnRunning waits for the job RUNNING at parallelism p with p TaskManagers, none
// of them in skip, and returns them.
func waitYarnRunning(t *testing.T, track, jid string, p int, skip map[string]bool) []tmInfo {
	t.Helper()
	var tms []tmInfo
	testkit.WaitFor(t, fmt.Sprintf("RUNNING at parallelism %d on fresh TaskManagers", p), func() (bool, error) {
		var d testkit.JobDetails
		if err := testkit.GetJSON(context.Background(), track+"/jobs/"+jid, &d); err != nil {
			return false, err
		}
		if err := testkit.RunningAt(d, p); err != nil {
			return false, err
		}
		var err error
		if tms, err = taskManagers(track); err != nil {
			return false, err
		}
		if len(tms) != p {
			return false, fmt.Errorf("%d TaskManagers", len(tms))
		}
		for _, tm := range tms {
			if skip[tm.ID] {
				return false, fmt.Errorf("%s still registered", tm.ID)
			}
		}
		return true, nil
	})
	return tms
}

// killTaskManager SIGKILLs the TaskManager process with that id (its container ends). The
// process is looked for for a while: YARN's container launch (bash, then exec of tide) can
// lag behind the AM's view by a moment.
func killTaskManager(t *testing.T, app, id string) {
	t.Helper()
	deadline := time.Now().Add(15 * time.Second)
	var seen []string
	for {
		pid, tms := findTaskManager(app, id)
		if pid > 0 {
			if err := syscall.Kill(pid, syscall.SIGKILL); err != nil {
				t.Fatalf("killing TaskManager %s (pid %d): %v", id, pid, err)
			}
			return
		}
		seen = tms
		if time.Now().After(deadline) {
			t.Fatalf("no TaskManager process with --resource-id %s in a container of %s; TaskManager processes: %v", id, app, seen)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// killTaskManagerUnlessReleased kills the TaskManager's process, unless the AM released
// it first (it is no longer registered and its process is gone).
func killTaskManagerUnlessReleased(t *testing.T, app, track, id string) {
	t.Helper()
	deadline := time.Now().Add(15 * time.Second)
	for {
		if pid, _ := findTaskManager(app, id); pid > 0 {
			if err := syscall.Kill(pid, syscall.SIGKILL); err != nil {
				t.Fatalf("killing TaskManager %s (pid %d): %v", id, pid, err)
			}
			return
		}
		tms, err := taskManagers(track)
		registered := err != nil // unknown: keep looking for the process
		for _, tm := range tms {
			registered = registered || tm.ID == id
		}
		if !registered {
			t.Logf("TaskManager %s was released by the AM before the test killed it", id)
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("TaskManager %s is registered but no process with --resource-id %s runs", id, id)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// findTaskManager returns the pid of the `tide taskmanager --resource-id id` process that runs
// in a container of application app, or 0 and the command lines of the TaskManager
// processes it saw. TaskManager ids repeat across applications (tm-1-1 is the first of
// every application), so the container's id, which names its application, must match too.
func findTaskManager(app, id string) (int, []string) {
	// container_<cluster timestamp>_<application sequence>_<attempt>_<n>, possibly with an
	// epoch (container_e17_...) in front.
	appPart := "_" + strings.TrimPrefix(app, "application_") + "_"
	var tms []string
	for _, p := range testkit.Processes() {
		if p.Role() != "taskmanager" {
			continue
		}
		tms = append(tms, strings.Join(p.Args, " "))
		if v, ok := p.Flag("--resource-id"); !ok || v != id {
			continue
		}
		if c, _ := p.Env("CONTAINER_ID"); strings.Contains(c, appPart) {
			return p.PID, nil
		}
	}
	return 0, tms
}

// TestYARNPerJob submits the checkable job to the MiniYARNCluster with tide run, sees it
// RUNNING with TaskManagers in containers, kills a TaskManager container (the job goes
// on, a replacement comes), blocks one NodeManager (replacements avoid it), unblocks it
// and blocks the other (replacements go back to it), and checks the exact output.
func TestYARNPerJob(t *testing.T) {
	env := hadooptest.RequireYARN(t)
	if len(env.NodeManagers) != 2 {
		t.Fatalf("want 2 NodeManagers, the cluster has %v", env.NodeManagers)
	}
	out := t.TempDir()
	jobArgs := []string{"--records", "150000", "--keys", "11", "--rate", "3000", "--output", out}
	r := startYarnRun(t, env, nil, jobArgs)
	t.Logf("%s RUNNING; AM at %s", r.app, r.track)
	jid := r.jobID(t)
	tms := waitYarnRunning(t, r.track, jid, 2, nil)
	checkPageThroughYARNProxy(t, env, r.app, jid)
	for _, tm := range tms {
		if !strings.HasPrefix(tm.ID, "tm-1-") || !strings.Contains(strings.Join(env.NodeManagers, ","), tm.Node) {
			t.Fatalf("TaskManager %+v: want a driver-started id on a NodeManager of %v", tm, env.NodeManagers)
		}
	}

	// 1. Kill one TaskManager container: the job goes on and a replacement arrives, and
	// tide run says why the job restarted.
	killed := tms[0].ID
	gone := map[string]bool{killed: true}
	killTaskManager(t, r.app, killed)
	tms = waitYarnRunning(t, r.track, jid, 2, gone)
	lost := regexp.MustCompile(`(?m)^` + regexp.QuoteMeta(r.app) + `: failure: .*\(attempt \d+, on ` +
		regexp.QuoteMeta(killed) + `\): task manager ` + regexp.QuoteMeta(killed) + ` lost`)
	testkit.WaitFor(t, "tide run to print the lost TaskManager as the failure", func() (bool, error) {
		return lost.MatchString(r.out.String()), fmt.Errorf("output so far:\n%s", r.out)
	})

	// 2. and 3. Block one NodeManager, then the other: replacements land on the free one.
	for i, blocked := range env.NodeManagers {
		free := env.NodeManagers[1-i]
		if i == 1 {
			if err := sendJSON(http.MethodDelete, r.track+"/blocklist/nodes/"+env.NodeManagers[0], "", http.StatusOK); err != nil {
				if err2 := sendJSON(http.MethodDelete, r.track+"/blocklist/nodes/"+env.NodeManagers[0], "", http.StatusNoContent); err2 != nil {
					t.Fatalf("unblocking: %v / %v", err, err2)
				}
			}
		}
		if err := sendJSON(http.MethodPut, r.track+"/blocklist/nodes/"+blocked, `{"action":"MARK_BLOCKED","cause":"e2e test"}`, http.StatusCreated); err != nil {
			t.Fatal(err)
		}
		for _, tm := range tms {
			gone[tm.ID] = true
			// A TaskManager on the node just blocked may already be gone: once the first
			// kill restarts the job its slot is free, and free slots on a blocked node are
			// released (FLIP-224), so the AM hands its container back to YARN.
			killTaskManagerUnlessReleased(t, r.app, r.track, tm.ID)
		}
		tms = waitYarnRunning(t, r.track, jid, 2, gone)
		for _, tm := range tms {
			if tm.Node != free {
				t.Fatalf("with %s blocked, TaskManager %s started on %s", blocked, tm.ID, tm.Node)
			}
		}
		t.Logf("%s blocked: TaskManagers %+v", blocked, tms)
	}

	// Every kill is a resource change the job rescales on. With a replacement container
	// already requested, the AM absorbs it and redeploys at full parallelism (issue 9)
	// instead of scaling down first; a slow replacement may still scale down and back up.
	// Either way each loss shows up in the history, and the job ends up at p=2 again.
	var rs api.Rescales
	if err := testkit.GetJSON(context.Background(), r.track+"/jobs/"+jid+"/rescales", &rs); err != nil {
		t.Fatal(err)
	}
	losses := 0
	for _, x := range rs.Rescales {
		if x.Trigger == "RESOURCE_LOST" || x.Trigger == "RECOVERABLE_FAILOVER" || x.Trigger == "BLOCKLIST_EVACUATION" {
			losses++
		}
	}
	if losses == 0 {
		t.Errorf("no rescale after the TaskManager kills: %+v", rs)
	}
	if n := len(rs.Rescales); n == 0 {
		t.Errorf("empty rescale history")
	} else {
		for _, v := range rs.Rescales[n-1].Vertices {
			if v.After != 2 {
				t.Errorf("last rescale left %s at parallelism %d, want 2 (both replacements in use): %+v", v.Vertex, v.After, rs.Rescales[n-1])
			}
		}
	}

	r.wait(t, 2*time.Minute)
	testkit.CheckExactOutput(t, out, jobArgs)
}

// TestYARNSubmitErrors: clear errors for an unreachable RM, an unknown queue and a
// container above the maximum allocation.
func TestYARNSubmitErrors(t *testing.T) {
	env := hadooptest.RequireYARN(t)
	tests := []struct {
		name string
		args []string
		want string
	}{
		{"unreachable", []string{"-Dyarn.resourcemanager.address=127.0.0.1:1"}, "YARN ResourceManager unreachable"},
		{"queue", []string{"-Dyarn.application.queue=no-such-queue"}, "YARN queue not found"},
		{"too large", []string{"-Dtaskmanager.memory.process.size=64 gb"}, "larger than the YARN maximum allocation"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cmd := exec.Command(tideBin, yarnRunArgs(tt.args, []string{"--output", t.TempDir()})...)
			cmd.Env = hadoopEnv(env)
			b, err := cmd.CombinedOutput()
			if err == nil || !strings.Contains(string(b), tt.want) {
				t.Fatalf("tide run = %v, output:\n%s\nwant an error saying %q", err, b, tt.want)
			}
		})
	}
}
