// Package e2e runs the stock tide binary's KafkaCount job on local clusters (real AM and
// TaskManager processes) against the broker of test/kafka.
package e2e

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/tidestream/tide/internal/testkit"
	"github.com/tidestream/tide/standalone"
	"github.com/tidestream/tide/test/kafka/kafkatest"
)

var tideBin string

func TestMain(m *testing.M) {
	if _, err := kafkatest.Load(); err != nil && os.Getenv(kafkatest.RequireEnvVar) != "1" {
		// No broker: every test skips at kafkatest.Require; building tide would be wasted.
		os.Exit(m.Run())
	}
	dir, err := os.MkdirTemp("", "tide-kafka-e2e-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	tideBin = filepath.Join(dir, "tide")
	cmd := exec.Command("go", "build", "-o", tideBin, "github.com/tidestream/tide/cmd/tide")
	cmd.Stdout, cmd.Stderr = os.Stderr, os.Stderr
	if err := cmd.Run(); err != nil {
		fmt.Fprintf(os.Stderr, "building tide: %v\n", err)
		os.Exit(1)
	}
	code := m.Run()
	os.RemoveAll(dir)
	os.Exit(code)
}

// reactive: reactive mode, rescales at once, a restart strategy that keeps trying, file://
// checkpoints every interval, one slot per TaskManager.
func reactive(ckptDir, interval string) []string {
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

func restOf(c *standalone.LocalCluster) testkit.Getter {
	return testkit.RESTGetter("http://" + c.RESTAddress())
}

func waitCheckpointIn(t testing.TB, c *standalone.LocalCluster, id string, attempt int64) {
	t.Helper()
	testkit.WaitFor(t, fmt.Sprintf("a checkpoint of attempt %d", attempt), func() (bool, error) {
		var s testkit.CheckpointStats
		if err := restOf(c)("/jobs/"+id+"/checkpoints", &s); err != nil {
			return false, err
		}
		return s.Latest.Completed != nil && s.Latest.Completed.Attempt >= attempt, nil
	})
}

// latestCompleted is the id of the job's latest completed checkpoint (0: none).
func latestCompleted(t testing.TB, c *standalone.LocalCluster, id string) int64 {
	t.Helper()
	var s testkit.CheckpointStats
	if err := restOf(c)("/jobs/"+id+"/checkpoints", &s); err != nil {
		t.Fatal(err)
	}
	if s.Latest.Completed == nil {
		return 0
	}
	return s.Latest.Completed.ID
}

func readFile(path string) (string, error) {
	b, err := os.ReadFile(path)
	return string(b), err
}
