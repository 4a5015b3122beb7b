package e2e

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/tidestream/tide/internal/testkit"
	"github.com/tidestream/tide/standalone"
)

var (
	// tideBin is the binary under test; otherBin is the same code linked with another
	// build id (for the mismatched-build test).
	tideBin, otherBin string
)

func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "tide-e2e-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	tideBin = filepath.Join(dir, "tide")
	otherBin = filepath.Join(dir, "tide-other")
	for _, b := range []struct{ out, ldflags string }{
		{tideBin, ""},
		{otherBin, "-X github.com/tidestream/tide/rpc.buildID=some-other-build"},
	} {
		cmd := exec.Command("go", "build", "-ldflags", b.ldflags, "-o", b.out, "github.com/tidestream/tide/cmd/tide")
		cmd.Stdout, cmd.Stderr = os.Stderr, os.Stderr
		if err := cmd.Run(); err != nil {
			fmt.Fprintf(os.Stderr, "building %s: %v\n", b.out, err)
			os.Exit(1)
		}
	}
	code := m.Run()
	os.RemoveAll(dir)
	os.Exit(code)
}

// reactive are the settings every cluster of these tests uses: reactive mode, rescale
// at once, and a heartbeat timeout far beyond any test deadline, so a TaskManager's loss
// can only be noticed through its dropped connection.
func reactive(ckptDir string, interval string) []string {
	return []string{
		"execution-mode=reactive",
		"jobmanager.adaptive-scheduler.executing.cooldown-after-rescaling=0 s",
		"jobmanager.adaptive-scheduler.executing.resource-stabilization-timeout=0 s",
		"heartbeat.timeout=30 min",
		"restart-strategy.type=fixed-delay",
		"restart-strategy.fixed-delay.attempts=1000",
		"restart-strategy.fixed-delay.delay=10 ms",
		"state.checkpoints.dir=file://" + ckptDir,
		"execution.checkpointing.interval=" + interval,
		"taskmanager.numberOfTaskSlots=1",
	}
}

func startCluster(t testing.TB, job string, args []string, tms int, dyn []string) *standalone.LocalCluster {
	t.Helper()
	return startLocal(t, standalone.LocalOptions{Dynamic: dyn, JobName: job, JobArgs: args, TaskManagers: tms})
}

// startLocal starts a local cluster of tideBin with opts in a fresh work directory and
// stops it when the test ends, showing the end of its logs if the test failed.
func startLocal(t testing.TB, opts standalone.LocalOptions) *standalone.LocalCluster {
	t.Helper()
	opts.Binary, opts.WorkDir = tideBin, t.TempDir()
	c, err := standalone.StartLocal(context.Background(), opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := c.Stop(context.Background()); err != nil {
			t.Logf("stopping cluster: %v", err)
		}
		if t.Failed() {
			dumpLogs(t, c.LogDir())
		}
	})
	return c
}

func dumpLogs(t testing.TB, dir string) {
	entries, _ := os.ReadDir(dir)
	for _, e := range entries {
		b, _ := os.ReadFile(filepath.Join(dir, e.Name()))
		lines := strings.Split(string(b), "\n")
		if len(lines) > 60 {
			lines = lines[len(lines)-60:]
		}
		t.Logf("---- %s (last lines)\n%s", e.Name(), strings.Join(lines, "\n"))
	}
}

// restOf reads JSON from the cluster AM's REST API.
func restOf(c *standalone.LocalCluster) testkit.Getter {
	return testkit.RESTGetter("http://" + c.RESTAddress())
}

// rest reads path of the cluster AM's REST API into v.
func rest(c *standalone.LocalCluster, path string, v any) error {
	return restOf(c)(path, v)
}

// jobID waits for the cluster's AM to serve its one job and returns the job's id.
func jobID(t testing.TB, c *standalone.LocalCluster) string {
	t.Helper()
	return testkit.WaitJobID(t, restOf(c))
}

func waitRunningAt(t testing.TB, c *standalone.LocalCluster, id string, p int) testkit.JobDetails {
	t.Helper()
	return testkit.WaitRunningAt(t, restOf(c), id, p)
}

// waitCheckpointIn waits for a completed checkpoint of attempt (data flows again).
func waitCheckpointIn(t testing.TB, c *standalone.LocalCluster, id string, attempt int64) {
	t.Helper()
	testkit.WaitFor(t, fmt.Sprintf("a checkpoint of attempt %d", attempt), func() (bool, error) {
		var s testkit.CheckpointStats
		if err := rest(c, "/jobs/"+id+"/checkpoints", &s); err != nil {
			return false, err
		}
		return s.Latest.Completed != nil && s.Latest.Completed.Attempt >= attempt, nil
	})
}

// waitExact waits for the cluster's AM to end the job successfully within timeout and
// checks that the checkable job run with args committed exactly its expected output to out.
func waitExact(t testing.TB, c *standalone.LocalCluster, timeout time.Duration, out string, args []string) {
	t.Helper()
	select {
	case <-c.AMDone():
	case <-time.After(timeout):
		t.Fatal("the job did not finish")
	}
	if err := c.AMErr(); err != nil {
		t.Fatalf("AM exited with %v", err)
	}
	testkit.CheckExactOutput(t, out, args)
}

// tideCmd runs the binary to completion and returns its combined output and exit error.
func tideCmd(t testing.TB, bin string, timeout time.Duration, args ...string) (string, error) {
	t.Helper()
	return testkit.RunCommand(context.Background(), timeout, nil, bin, args...)
}
