package e2e

import (
	"net"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/tidestream/tide/examples"
	"github.com/tidestream/tide/internal/testkit"
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
