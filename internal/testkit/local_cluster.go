package testkit

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/tidestream/tide/standalone"
)

// StartLocal starts a local cluster of the tide binary bin with opts in a fresh work
// directory and stops it when the test ends, logging the end of its logs if the test failed.
func StartLocal(t testing.TB, bin string, opts standalone.LocalOptions) *standalone.LocalCluster {
	t.Helper()
	opts.Binary, opts.WorkDir = bin, t.TempDir()
	c, err := standalone.StartLocal(context.Background(), opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := c.Stop(context.Background()); err != nil {
			t.Logf("stopping cluster: %v", err)
		}
		if t.Failed() {
			TailLogs(t, c.LogDir())
		}
	})
	return c
}

// TailLogs logs the last 60 lines of every file in dir (a cluster's log directory).
func TailLogs(t testing.TB, dir string) {
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

// ReactiveOneSlot are the settings every reactive e2e cluster starts from: reactive mode,
// one slot per TaskManager, file:// checkpoints in ckptDir every interval; extra follow
// (a later -D of the same key wins).
func ReactiveOneSlot(ckptDir, interval string, extra ...string) []string {
	return append([]string{
		"execution-mode=reactive",
		"taskmanager.numberOfTaskSlots=1",
		"state.checkpoints.dir=file://" + ckptDir,
		"execution.checkpointing.interval=" + interval,
	}, extra...)
}

// Reactive are the settings of the e2e tests' clusters: ReactiveOneSlot, rescale at once, a
// restart strategy that keeps trying, and a heartbeat timeout far beyond any test deadline,
// so a TaskManager's loss can only be noticed through its dropped connection.
func Reactive(ckptDir, interval string) []string {
	return ReactiveOneSlot(ckptDir, interval,
		"jobmanager.adaptive-scheduler.executing.cooldown-after-rescaling=0 s",
		"jobmanager.adaptive-scheduler.executing.resource-stabilization-timeout=0 s",
		"heartbeat.timeout=30 min",
		"restart-strategy.type=fixed-delay",
		"restart-strategy.fixed-delay.attempts=1000",
		"restart-strategy.fixed-delay.delay=10 ms",
	)
}
