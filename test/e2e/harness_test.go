package e2e

import (
	"context"
	"fmt"
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
	testkit.MainWithTide(m, testkit.TideBuild{Bin: &tideBin},
		testkit.TideBuild{Bin: &otherBin, LDFlags: "-X github.com/tidestream/tide/rpc.buildID=some-other-build"})
}

// reactive are the settings every cluster of these tests uses (testkit.Reactive).
func reactive(ckptDir string, interval string) []string { return testkit.Reactive(ckptDir, interval) }

func startCluster(t testing.TB, job string, args []string, tms int, dyn []string) *standalone.LocalCluster {
	t.Helper()
	return startLocal(t, standalone.LocalOptions{Dynamic: dyn, JobName: job, JobArgs: args, TaskManagers: tms})
}

// startLocal starts a local cluster of tideBin with opts (see testkit.StartLocal).
func startLocal(t testing.TB, opts standalone.LocalOptions) *standalone.LocalCluster {
	t.Helper()
	return testkit.StartLocal(t, tideBin, opts)
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

// waitSucceeded waits for the cluster's AM to end the job successfully within timeout.
func waitSucceeded(t testing.TB, c *standalone.LocalCluster, timeout time.Duration) {
	t.Helper()
	select {
	case <-c.AMDone():
	case <-time.After(timeout):
		t.Fatalf("the job did not finish within %s (logs in %s)", timeout, c.LogDir())
	}
	if err := c.AMErr(); err != nil {
		t.Fatalf("AM exited with %v (logs in %s)", err, c.LogDir())
	}
}

// waitExact waits for the cluster's AM to end the job successfully within timeout and
// checks that the checkable job run with args committed exactly its expected output to out.
func waitExact(t testing.TB, c *standalone.LocalCluster, timeout time.Duration, out string, args []string) {
	t.Helper()
	waitSucceeded(t, c, timeout)
	testkit.CheckExactOutput(t, out, args)
}

// cancelJob cancels job id with `tide cancel --wait` and waits for the cluster's AM to exit.
func cancelJob(t testing.TB, c *standalone.LocalCluster, id string) {
	t.Helper()
	if cli, err := tideCmd(t, tideBin, 2*time.Minute, "cancel", id, "--wait", "60s", "-m", c.RESTAddress()); err != nil {
		t.Fatalf("tide cancel: %v\n%s", err, cli)
	}
	select {
	case <-c.AMDone():
	case <-time.After(2 * time.Minute):
		t.Fatal("the cancelled job's AM did not exit")
	}
}

// tideCmd runs the binary to completion and returns its combined output and exit error.
func tideCmd(t testing.TB, bin string, timeout time.Duration, args ...string) (string, error) {
	t.Helper()
	return testkit.RunCommand(context.Background(), timeout, nil, bin, args...)
}
