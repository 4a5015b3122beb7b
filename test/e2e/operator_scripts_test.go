package e2e

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/tidestream/tide/internal/testkit"
)

// scripted is a per-job standalone cluster started with bin/standalone-job.sh and
// bin/taskmanager.sh, with its own copy of conf/, pid and log directories and ports.
type scripted struct {
	t        testing.TB
	bin      string // the repository's bin/
	confDir  string
	pidDir   string
	logDir   string
	restAddr string
	rpcPort  int
}

// repoRoot is the repository's top folder (this file lives in test/e2e).
func repoRoot(t testing.TB) string {
	_, file, _, ok := runtime.Caller(0)
	if !ok {
		t.Fatal("cannot locate the test source")
	}
	return filepath.Clean(filepath.Join(filepath.Dir(file), "..", ".."))
}

// newScripted copies conf/ into a temporary directory and appends settings to its
// flink-conf.yaml; nothing runs yet.
func newScripted(t testing.TB, settings ...string) *scripted {
	t.Helper()
	root := repoRoot(t)
	dir := t.TempDir()
	s := &scripted{t: t, bin: filepath.Join(root, "bin"), confDir: filepath.Join(dir, "conf"),
		pidDir: filepath.Join(dir, "pid"), logDir: filepath.Join(dir, "log"), rpcPort: testkit.FreePort(t)}
	restPort := testkit.FreePort(t)
	s.restAddr = "127.0.0.1:" + strconv.Itoa(restPort)
	shipped, err := os.ReadFile(filepath.Join(root, "conf", "flink-conf.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(s.confDir, 0o755); err != nil {
		t.Fatal(err)
	}
	settings = append([]string{
		"rest.port: " + strconv.Itoa(restPort),
		"jobmanager.rpc.port: " + strconv.Itoa(s.rpcPort),
	}, settings...)
	s.writeConf(string(shipped) + "\n# test settings\n" + strings.Join(settings, "\n") + "\n")
	t.Cleanup(s.stopAll)
	return s
}

// writeConf replaces flink-conf.yaml as an editor does: write a new file, rename it over.
func (s *scripted) writeConf(content string) {
	s.t.Helper()
	tmp := filepath.Join(s.confDir, ".flink-conf.yaml.tmp")
	if err := os.WriteFile(tmp, []byte(content), 0o644); err != nil {
		s.t.Fatal(err)
	}
	if err := os.Rename(tmp, filepath.Join(s.confDir, "flink-conf.yaml")); err != nil {
		s.t.Fatal(err)
	}
}

func (s *scripted) readConf() string {
	s.t.Helper()
	b, err := os.ReadFile(filepath.Join(s.confDir, "flink-conf.yaml"))
	if err != nil {
		s.t.Fatal(err)
	}
	return string(b)
}

func (s *scripted) env() []string {
	return append(os.Environ(), "FLINK_CONF_DIR="+s.confDir, "FLINK_PID_DIR="+s.pidDir,
		"FLINK_LOG_DIR="+s.logDir, "TIDE_BIN="+tideBin, "FLINK_IDENT_STRING=e2e",
		"TIDE_JOBMANAGER=", "TIDE_REST_TOKEN=")
}

// run runs a script of bin/ (or the bin/tide wrapper) and returns its combined output.
func (s *scripted) run(script string, args ...string) (string, error) {
	s.t.Helper()
	return testkit.RunCommand(context.Background(), time.Minute, s.env(), filepath.Join(s.bin, script), args...)
}

func (s *scripted) mustRun(script string, args ...string) string {
	s.t.Helper()
	out, err := s.run(script, args...)
	if err != nil {
		s.t.Fatalf("%s %q: %v\n%s", script, args, err, out)
	}
	return out
}

// tide runs the CLI through bin/tide against this cluster's AM.
func (s *scripted) tide(args ...string) (string, error) {
	s.t.Helper()
	return s.run("tide", append(args, "-m", s.restAddr)...)
}

func (s *scripted) pidFile(daemon string) string {
	return filepath.Join(s.pidDir, "tide-e2e-"+daemon+".pid")
}

// pids lists the pids recorded for a daemon kind (none when the file is gone).
func (s *scripted) pids(daemon string) []int {
	f, err := os.Open(s.pidFile(daemon))
	if err != nil {
		return nil
	}
	defer f.Close()
	var out []int
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if n, err := strconv.Atoi(strings.TrimSpace(sc.Text())); err == nil {
			out = append(out, n)
		}
	}
	return out
}

func alive(pid int) bool { return syscall.Kill(pid, 0) == nil }

// stopAll stops every daemon through the scripts and checks they cleaned up; on failure
// it shows the end of each log.
func (s *scripted) stopAll() {
	var pids []int
	for _, d := range []string{"taskexecutor", "standalonejob"} {
		pids = append(pids, s.pids(d)...)
	}
	if out, err := s.run("taskmanager.sh", "stop-all"); err != nil {
		s.t.Errorf("taskmanager.sh stop-all: %v\n%s", err, out)
	}
	if out, err := s.run("standalone-job.sh", "stop"); err != nil {
		s.t.Errorf("standalone-job.sh stop: %v\n%s", err, out)
	}
	for _, d := range []string{"taskexecutor", "standalonejob"} {
		if _, err := os.Stat(s.pidFile(d)); err == nil {
			s.t.Errorf("pid file %s left behind after stop", s.pidFile(d))
		}
	}
	for _, pid := range pids {
		if alive(pid) {
			s.t.Errorf("process %d still runs after the stop scripts; killing it", pid)
			_ = syscall.Kill(pid, syscall.SIGKILL)
		}
	}
	if s.t.Failed() {
		testkit.TailLogs(s.t, s.logDir)
	}
}

// get reads path of the AM's REST API into v.
func (s *scripted) get(path string, v any) error {
	return testkit.GetJSON(context.Background(), "http://"+s.restAddr+path, v)
}

// jobID waits for the AM to serve its one job and returns the job's id.
func (s *scripted) jobID() string {
	s.t.Helper()
	return testkit.WaitJobID(s.t, s.get)
}

// job reads GET /jobs/:id.
func (s *scripted) job(id string) (testkit.JobDetails, error) {
	var d testkit.JobDetails
	err := s.get("/jobs/"+id, &d)
	return d, err
}

// waitRunning waits until the job runs with every vertex at parallelism p.
func (s *scripted) waitRunning(id string, p int) testkit.JobDetails {
	s.t.Helper()
	return testkit.WaitRunningAt(s.t, s.get, id, p)
}

// waitTaskManagers waits until n TaskManagers are registered.
func (s *scripted) waitTaskManagers(n int) {
	s.t.Helper()
	testkit.WaitFor(s.t, fmt.Sprintf("%d TaskManagers registered", n), func() (bool, error) {
		var tms struct {
			TaskManagers []json.RawMessage `json:"taskmanagers"`
		}
		if err := s.get("/taskmanagers", &tms); err != nil {
			return false, err
		}
		return len(tms.TaskManagers) == n, fmt.Errorf("%d registered", len(tms.TaskManagers))
	})
}

// configInForce reads one key of GET /jobmanager/config ("" when absent).
func (s *scripted) configInForce(key string) (string, error) {
	var entries []struct {
		Key   string `json:"key"`
		Value string `json:"value"`
	}
	if err := s.get("/jobmanager/config", &entries); err != nil {
		return "", err
	}
	for _, e := range entries {
		if e.Key == key {
			return e.Value, nil
		}
	}
	return "", nil
}

// amLog returns the AM's log so far.
func (s *scripted) amLog() string {
	matches, _ := filepath.Glob(filepath.Join(s.logDir, "tide-e2e-standalonejob-*.log"))
	var b strings.Builder
	for _, m := range matches {
		data, _ := os.ReadFile(m)
		b.Write(data)
	}
	return b.String()
}

// TestOperatorScriptsUsage: the scripts explain their mistakes and exit non-zero, and stop
// without anything running is not an error.
func TestOperatorScriptsUsage(t *testing.T) {
	s := newScripted(t)
	tests := []struct {
		script string
		args   []string
		fails  bool
		want   string
	}{
		{"standalone-job.sh", nil, true, "Usage: standalone-job.sh"},
		{"standalone-job.sh", []string{"start"}, true, "needs --job-classname NAME"},
		{"standalone-job.sh", []string{"start", "--job-classname"}, true, "--job-classname needs a value"},
		{"standalone-job.sh", []string{"restart"}, true, "Unknown action 'restart'"},
		{"standalone-job.sh", []string{"start", "--job-classname", "NoSuchJob"}, true, "unknown job \"NoSuchJob\""},
		{"standalone-job.sh", []string{"stop"}, false, "No standalonejob daemon to stop"},
		{"taskmanager.sh", nil, true, "Usage: taskmanager.sh"},
		{"taskmanager.sh", []string{"launch"}, true, "Unknown action 'launch'"},
		{"taskmanager.sh", []string{"stop"}, false, "No taskexecutor daemon to stop"},
		{"taskmanager.sh", []string{"stop-all"}, false, "No taskexecutor daemon to stop"},
	}
	for _, tt := range tests {
		out, err := s.run(tt.script, tt.args...)
		if (err != nil) != tt.fails || !strings.Contains(out, tt.want) {
			t.Errorf("%s %q: err %v (want failure: %v), output:\n%s\nwant it to contain %q", tt.script, tt.args, err, tt.fails, out, tt.want)
		}
	}
	if _, err := os.Stat(s.pidFile("standalonejob")); err == nil {
		t.Error("a failed start left a pid file")
	}
}

// TestDaemonLogRotated: a daemon started again logs to a fresh file, and its last run's
// log moves to <log>.1 (Flink's rotation at daemon start).
func TestDaemonLogRotated(t *testing.T) {
	s := newScripted(t)
	host, err := os.Hostname()
	if err != nil {
		t.Fatal(err)
	}
	log := filepath.Join(s.logDir, "tide-e2e-taskexecutor-0-"+host+".log")
	started := func(path string) int {
		b, _ := os.ReadFile(path)
		return strings.Count(string(b), `msg="TaskManager started"`)
	}
	for run := 1; run <= 2; run++ {
		s.mustRun("taskmanager.sh", "start")
		testkit.WaitFor(t, "the TaskManager's start in its log", func() (bool, error) {
			return started(log) == 1, fmt.Errorf("%d starts in %s", started(log), log)
		})
		s.mustRun("taskmanager.sh", "stop")
	}
	if n := started(log + ".1"); n != 1 {
		t.Errorf("%s.1 (the first run's log) holds %d TaskManager starts, want 1", log, n)
	}
	if _, err := os.Stat(log + ".2"); err == nil {
		t.Errorf("%s.2 exists after two runs", log)
	}
}
