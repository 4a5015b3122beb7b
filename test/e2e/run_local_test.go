package e2e

import (
	"context"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/tidestream/tide/examples"
	"github.com/tidestream/tide/internal/testkit"
	"github.com/tidestream/tide/standalone"
)

// TestRunLocalPrintsWebPage: `tide run --target local` (what `make run` does) says where
// the job's web page is, and so does the AM's start line in its log; the bounded job
// runs to its exact answer and the command returns.
func TestRunLocalPrintsWebPage(t *testing.T) {
	work, out := t.TempDir(), t.TempDir()
	args := []string{"--records", "3000", "--keys", "3", "--output", out}
	got, err := tideCmd(t, tideBin, 2*time.Minute, append([]string{"run", "--target", "local", "--job-classname",
		examples.CheckableCountName, "--taskmanagers", "1", "--work-dir", work, "--"}, args...)...)
	if err != nil {
		t.Fatalf("tide run: %v\n%s", err, got)
	}
	if !regexp.MustCompile(`(?m)^  web page:  http://127\.0\.0\.1:\d+/ `).MatchString(got) {
		t.Errorf("tide run printed no web page URL:\n%s", got)
	}
	testkit.CheckExactOutput(t, out, args)
	log, err := os.ReadFile(filepath.Join(work, "log", "jobmanager.log"))
	if err != nil {
		t.Fatal(err)
	}
	if !regexp.MustCompile(`AM started.*web=http://127\.0\.0\.1:\d+/`).Match(log) {
		t.Errorf("the AM's start line names no web page:\n%s", log)
	}
}

// TestRunLocalPorts: `tide run --target local` binds the AM on rest.port when the user sets
// it, and when that port is taken it fails at once, saying which setting and why, before it
// starts any process.
func TestRunLocalPorts(t *testing.T) {
	t.Run("set", func(t *testing.T) {
		work, out := t.TempDir(), t.TempDir()
		port := strconv.Itoa(testkit.FreePort(t))
		args := []string{"--records", "500", "--keys", "2", "--output", out}
		got, err := tideCmd(t, tideBin, 2*time.Minute, append([]string{"run", "--target", "local", "--job-classname",
			examples.CheckableCountName, "--taskmanagers", "1", "--work-dir", work, "-D", "rest.port=" + port, "--"}, args...)...)
		if err != nil {
			t.Fatalf("tide run: %v\n%s", err, got)
		}
		if !strings.Contains(got, "  web page:  http://127.0.0.1:"+port+"/ ") {
			t.Errorf("tide run -D rest.port=%s printed another web page address:\n%s", port, got)
		}
		testkit.CheckExactOutput(t, out, args)
	})
	t.Run("taken", func(t *testing.T) {
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		defer ln.Close()
		port := strconv.Itoa(ln.Addr().(*net.TCPAddr).Port)
		work := t.TempDir()
		got, err := tideCmd(t, tideBin, time.Minute, "run", "--target", "local", "--job-classname",
			examples.CheckableCountName, "--taskmanagers", "2", "--work-dir", work, "-D", "rest.port="+port,
			"--", "--records", "500", "--output", t.TempDir())
		if exitCode(err) != 1 {
			t.Fatalf("tide run on a taken rest.port: exit %v, want 1\n%s", err, got)
		}
		for _, w := range []string{"rest.port 127.0.0.1:" + port + " for the AM", "address already in use"} {
			if !strings.Contains(got, w) {
				t.Errorf("tide run on a taken rest.port: output lacks %q:\n%s", w, got)
			}
		}
		if logs, _ := filepath.Glob(filepath.Join(work, "log", "*.log")); len(logs) != 0 {
			t.Errorf("processes were started for an AM that cannot listen: %v", logs)
		}
	})
}

// TestRunLocalTwiceInOneWorkDir: a second `tide run` in the same --work-dir logs afresh:
// the first run's logs move to <name>.log.1 (none appended to, none of a TaskManager the
// second run does not start left as current), and the second run's answer is exact.
func TestRunLocalTwiceInOneWorkDir(t *testing.T) {
	work := t.TempDir()
	logDir := filepath.Join(work, "log")
	run := func(tms string) {
		out := t.TempDir()
		args := []string{"--records", "500", "--keys", "2", "--output", out}
		got, err := tideCmd(t, tideBin, 2*time.Minute, append([]string{"run", "--target", "local", "--job-classname",
			examples.CheckableCountName, "--taskmanagers", tms, "--work-dir", work, "--"}, args...)...)
		if err != nil {
			t.Fatalf("tide run --taskmanagers %s: %v\n%s", tms, err, got)
		}
		testkit.CheckExactOutput(t, out, args)
	}
	run("2")
	run("1")
	for name, want := range map[string]int{"jobmanager.log": 1, "jobmanager.log.1": 1} {
		b, err := os.ReadFile(filepath.Join(logDir, name))
		if err != nil {
			t.Fatal(err)
		}
		if n := strings.Count(string(b), `msg="AM started"`); n != want {
			t.Errorf("%s holds %d AM starts, want %d:\n%s", name, n, want, b)
		}
	}
	current, _ := filepath.Glob(filepath.Join(logDir, "*.log"))
	for i := range current {
		current[i] = filepath.Base(current[i])
	}
	if want := []string{"jobmanager.log", "taskmanager-1.log"}; !slices.Equal(current, want) {
		t.Errorf("current logs after the second run: %v, want %v", current, want)
	}
	if _, err := os.Stat(filepath.Join(logDir, "taskmanager-2.log.1")); err != nil {
		t.Errorf("the first run's second TaskManager's log was not kept as taskmanager-2.log.1: %v", err)
	}
}

// TestRunLocalWorkDirInUse: a `tide run` on a --work-dir another local cluster runs in is
// refused at once, naming the directory and the holder; without --work-dir, a run whose
// default directory is in use takes <default>-2 and says so. The running cluster's job
// goes on to its exact answer.
func TestRunLocalWorkDirInUse(t *testing.T) {
	tmp := t.TempDir() // the runs' TMPDIR: their default work directory is tmp/tide-local
	work := filepath.Join(tmp, "tide-local")
	out := t.TempDir()
	args := []string{"--records", "4000", "--keys", "3", "--rate", "2000", "--output", out}
	c, err := standalone.StartLocal(context.Background(), standalone.LocalOptions{Binary: tideBin, WorkDir: work,
		Dynamic: reactive(t.TempDir(), "300 ms"), JobName: examples.CheckableCountName, JobArgs: args, TaskManagers: 1})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = c.Stop(context.Background()) })
	run := func(extra ...string) (string, error) {
		argv := append([]string{"run", "--target", "local", "--job-classname", examples.CheckableCountName, "--taskmanagers", "1"}, extra...)
		return testkit.RunCommand(context.Background(), time.Minute, []string{"TMPDIR=" + tmp}, tideBin, argv...)
	}

	got, err := run("--work-dir", work, "--", "--records", "10", "--output", t.TempDir())
	if exitCode(err) != 1 {
		t.Fatalf("tide run on a work directory in use: exit %v, want 1\n%s", err, got)
	}
	if want := "work directory in use by another local cluster: " + work + " (process " + strconv.Itoa(os.Getpid()) + ")"; !strings.Contains(got, want) {
		t.Errorf("tide run on a work directory in use: output lacks %q:\n%s", want, got)
	}

	out2 := t.TempDir()
	args2 := []string{"--records", "300", "--keys", "2", "--output", out2}
	got, err = run(append([]string{"--"}, args2...)...)
	if err != nil {
		t.Fatalf("tide run beside a run on the default work directory: %v\n%s", err, got)
	}
	if want := work + " is in use by another tide run; this one works in " + work + "-2"; !strings.Contains(got, want) {
		t.Errorf("tide run beside a run on the default work directory: output lacks %q:\n%s", want, got)
	}
	testkit.CheckExactOutput(t, out2, args2)
	if _, err := os.Stat(filepath.Join(work+"-2", "log", "jobmanager.log")); err != nil {
		t.Errorf("the second run's AM log is not in %s-2: %v", work, err)
	}

	select {
	case <-c.AMDone():
	case <-time.After(2 * time.Minute):
		t.Fatal("the running cluster's job did not finish")
	}
	if err := c.AMErr(); err != nil {
		t.Fatalf("the running cluster's AM: %v", err)
	}
	testkit.CheckExactOutput(t, out, args)
}

// TestRunLocalDiesWithItsCaller: when `tide run` dies without stopping its cluster (here
// SIGKILL; in use, SIGPIPE after `tide run ... | head`), the AM and TaskManagers it started
// end too instead of running on without it.
func TestRunLocalDiesWithItsCaller(t *testing.T) {
	work := t.TempDir()
	cmd := exec.Command(tideBin, "run", "--target", "local", "--job-classname", examples.CheckableCountName,
		"--taskmanagers", "2", "--work-dir", work, "--", "--records", "100000000", "--rate", "1000", "--output", t.TempDir())
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cmd.Process.Kill(); _ = cmd.Wait() })
	// The cluster's processes: every one gets the checkpoint directory under work.
	mine := func() []int {
		var pids []int
		for _, p := range testkit.Processes() {
			if slices.Contains(p.Args, "state.checkpoints.dir=file://"+filepath.Join(work, "checkpoints")) {
				pids = append(pids, p.PID)
			}
		}
		return pids
	}
	testkit.WaitFor(t, "the AM and two TaskManagers running", func() (bool, error) {
		b, _ := os.ReadFile(filepath.Join(work, "log", "jobmanager.log"))
		return len(mine()) == 3 && strings.Contains(string(b), `msg="AM started"`), fmt.Errorf("%d processes", len(mine()))
	})
	if err := cmd.Process.Kill(); err != nil {
		t.Fatal(err)
	}
	_ = cmd.Wait()
	testkit.WaitFor(t, "the cluster's processes to end after tide run was killed", func() (bool, error) {
		left := mine()
		return len(left) == 0, fmt.Errorf("still running: %v", left)
	})
}

// TestRunLocalPrintsFailures: a job that cannot start (its input on a NameNode nobody
// listens on) restarts again and again; `tide run` says why, once in full and then in
// short for each attempt failing the same way, and `tide status` shows the newest failure.
func TestRunLocalPrintsFailures(t *testing.T) {
	nn := "127.0.0.1:" + strconv.Itoa(testkit.FreePort(t)) // nothing listens there
	rest := strconv.Itoa(testkit.FreePort(t))
	out := &lockedBuffer{}
	cmd := exec.Command(tideBin, "run", "--target", "local", "--job-classname", examples.WordCountName,
		"--taskmanagers", "1", "--work-dir", t.TempDir(), "-D", "rest.port="+rest,
		"--", "--input", "hdfs://"+nn+"/words", "--output", t.TempDir())
	cmd.Stdout, cmd.Stderr = out, out
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cmd.Process.Kill(); _ = cmd.Wait() })
	testkit.WaitFor(t, "tide run to print the second attempt's failure", func() (bool, error) {
		return strings.Contains(out.String(), "attempt 2 failed with the same error as attempt 1"), fmt.Errorf("output so far:\n%s", out)
	})
	status, err := tideCmd(t, tideBin, time.Minute, "status", "-m", "127.0.0.1:"+rest, examples.WordCountName)
	if err != nil {
		t.Fatalf("tide status: %v\n%s", err, status)
	}
	if err := cmd.Process.Signal(os.Interrupt); err != nil {
		t.Fatal(err)
	}
	_ = cmd.Wait()
	got := out.String()
	first := "failure: "
	cause := "): create split enumerator of source lines (parallelism 1, restored 0 bytes): directory source: listing hdfs://" + nn + "/words"
	for _, w := range []string{first, "(attempt 1" + cause, "connection refused", "stopping the local cluster"} {
		if !strings.Contains(got, w) {
			t.Errorf("tide run: output lacks %q:\n%s", w, got)
		}
	}
	if !regexp.MustCompile(`(?m)^Failure: +\d{4}-\d\d-\d\d \d\d:\d\d:\d\d \(attempt \d+` + regexp.QuoteMeta(cause)).MatchString(status) {
		t.Errorf("tide status shows no failure naming the input:\n%s", status)
	}
}
