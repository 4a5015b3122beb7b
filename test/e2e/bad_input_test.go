package e2e

import (
	"errors"
	"os/exec"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/tidestream/tide/examples"
	"github.com/tidestream/tide/internal/testkit"
)

func exitCode(err error) int {
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		return ee.ExitCode()
	}
	if err != nil {
		return -1
	}
	return 0
}

func TestBadInput(t *testing.T) {
	tests := []struct {
		name string
		args []string
		want []string
	}{
		{"unknown job", []string{"jobmanager", "--job-classname", "NoSuchJob"},
			[]string{`unknown job "NoSuchJob"`, "CheckableCount", "TopSpeedWindowing", "WordCount"}},
		{"-D without =", []string{"jobmanager", "-Drest.port", "--job-classname", "WordCount"},
			[]string{"rest.port", "expected -Dkey=value"}},
		{"-D bad value", []string{"taskmanager", "-Dtaskmanager.numberOfTaskSlots=many"},
			[]string{"taskmanager.numberOfTaskSlots", "many"}},
		{"unknown flag", []string{"jobmanager", "--no-such-flag"}, []string{"no-such-flag"}},
		{"run bad target", []string{"run", "--target", "mars", "--job-classname", "WordCount"}, []string{`--target "mars"`}},
		{"bad job args", []string{"jobmanager", "--job-classname", examples.CheckableCountName, "--", "--records", "-5"},
			[]string{"CheckableCount"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			out, err := tideCmd(t, tideBin, 30*time.Second, tt.args...)
			if exitCode(err) != 1 {
				t.Fatalf("tide %v: exit %v, want 1\n%s", tt.args, err, out)
			}
			for _, w := range tt.want {
				if !strings.Contains(out, w) {
					t.Errorf("tide %v output lacks %q:\n%s", tt.args, w, out)
				}
			}
		})
	}
}

// TestTaskManagerRetriesUnreachableAM: with no AM listening, a TaskManager retries with
// backoff, logging each try (as information in the first second, while an AM started with
// it may still be coming up, then as a warning), and gives up after --connect-timeout with
// a clear error.
func TestTaskManagerRetriesUnreachableAM(t *testing.T) {
	port := testkit.FreePort(t)
	out, err := tideCmd(t, tideBin, time.Minute, "taskmanager", "-Djobmanager.rpc.address=127.0.0.1",
		"-Djobmanager.rpc.port="+strconv.Itoa(port), "--connect-timeout", "1500ms")
	if exitCode(err) != 1 {
		t.Fatalf("exit %v, want 1\n%s", err, out)
	}
	if n := strings.Count(out, "cannot reach the AM; retrying"); n < 2 {
		t.Errorf("%d retry log lines, want several:\n%s", n, out)
	}
	for _, level := range []string{"INFO", "WARN"} {
		if !strings.Contains(out, "level="+level+` msg="cannot reach the AM; retrying"`) {
			t.Errorf("no retry logged at level %s:\n%s", level, out)
		}
	}
	if !strings.Contains(out, "AM unreachable") || !strings.Contains(out, strconv.Itoa(port)) {
		t.Errorf("final error does not say the AM at port %d is unreachable:\n%s", port, out)
	}
}

// TestMismatchedBuildRefused: a TaskManager from another build is refused, and both
// sides say why.
func TestMismatchedBuildRefused(t *testing.T) {
	c := startCluster(t, examples.TopSpeedWindowingName, nil, 0, reactive(t.TempDir(), "1 s"))
	id := jobID(t, c)
	host, port, _ := strings.Cut(c.RPCAddress(), ":")
	out, err := tideCmd(t, otherBin, time.Minute, "taskmanager", "-Djobmanager.rpc.address="+host,
		"-Djobmanager.rpc.port="+port, "--connect-timeout", "30s")
	if exitCode(err) != 1 {
		t.Fatalf("TaskManager of another build: exit %v, want 1\n%s", err, out)
	}
	if !strings.Contains(out, "different build") || !strings.Contains(out, "some-other-build") {
		t.Errorf("TaskManager output does not explain the refusal:\n%s", out)
	}
	var tms struct {
		TaskManagers []struct{ ID string } `json:"taskmanagers"`
	}
	if err := rest(c, "/taskmanagers", &tms); err != nil {
		t.Fatal(err)
	}
	if len(tms.TaskManagers) != 0 {
		t.Fatalf("refused TaskManager is listed: %+v (job %s)", tms.TaskManagers, id)
	}
}
