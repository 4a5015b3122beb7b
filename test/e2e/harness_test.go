package e2e

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

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
	c, err := standalone.StartLocal(context.Background(), standalone.LocalOptions{
		Binary: tideBin, WorkDir: t.TempDir(), Dynamic: dyn, JobName: job, JobArgs: args, TaskManagers: tms,
	})
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

// rest reads JSON from the AM's REST API.
func rest(c *standalone.LocalCluster, path string, v any) error {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, "http://"+c.RESTAddress()+path, nil)
	if err != nil {
		return err
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		return err
	}
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("GET %s: %s: %s", path, resp.Status, body)
	}
	return json.Unmarshal(body, v)
}

type jobDetails struct {
	JID      string `json:"jid"`
	State    string `json:"state"`
	Attempt  int64  `json:"attempt"`
	Vertices []struct {
		ID          string `json:"id"`
		Parallelism int    `json:"parallelism"`
	} `json:"vertices"`
}

type checkpointStats struct {
	Counts struct {
		InProgress int64 `json:"in_progress"`
		Completed  int64 `json:"completed"`
	} `json:"counts"`
	Latest struct {
		Completed *struct {
			ID      int64 `json:"id"`
			Attempt int64 `json:"attempt"`
		} `json:"completed"`
	} `json:"latest"`
	History []struct {
		ID      int64  `json:"id"`
		Attempt int64  `json:"attempt"`
		Status  string `json:"status"`
	} `json:"history"`
}

func jobID(t testing.TB, c *standalone.LocalCluster) string {
	t.Helper()
	var id string
	waitFor(t, "REST API up", func() (bool, error) {
		var ov struct {
			Jobs []struct {
				JID string `json:"jid"`
			} `json:"jobs"`
		}
		if err := rest(c, "/jobs/overview", &ov); err != nil {
			return false, err
		}
		if len(ov.Jobs) != 1 {
			return false, fmt.Errorf("%d jobs", len(ov.Jobs))
		}
		id = ov.Jobs[0].JID
		return true, nil
	})
	return id
}

// waitFor polls cond; the generous deadline only guards against hangs.
func waitFor(t testing.TB, what string, cond func() (bool, error)) {
	t.Helper()
	deadline := time.Now().Add(90 * time.Second)
	var last error
	for time.Now().Before(deadline) {
		ok, err := cond()
		if ok {
			return
		}
		last = err
		time.Sleep(10 * time.Millisecond)
	}
	t.Fatalf("timed out waiting for %s (last: %v)", what, last)
}

// runningAt reports whether the job is RUNNING with every vertex at parallelism p.
func runningAt(c *standalone.LocalCluster, id string, p int) (jobDetails, bool, error) {
	var d jobDetails
	if err := rest(c, "/jobs/"+id, &d); err != nil {
		return d, false, err
	}
	if d.State != "RUNNING" || len(d.Vertices) == 0 {
		return d, false, fmt.Errorf("state %s", d.State)
	}
	for _, v := range d.Vertices {
		if v.Parallelism != p {
			return d, false, fmt.Errorf("vertex %s at parallelism %d", v.ID, v.Parallelism)
		}
	}
	return d, true, nil
}

func waitRunningAt(t testing.TB, c *standalone.LocalCluster, id string, p int) jobDetails {
	t.Helper()
	var d jobDetails
	waitFor(t, fmt.Sprintf("job RUNNING at parallelism %d", p), func() (bool, error) {
		var ok bool
		var err error
		d, ok, err = runningAt(c, id, p)
		return ok, err
	})
	return d
}

// waitCheckpointIn waits for a completed checkpoint of attempt (data flows again).
func waitCheckpointIn(t testing.TB, c *standalone.LocalCluster, id string, attempt int64) {
	t.Helper()
	waitFor(t, fmt.Sprintf("a checkpoint of attempt %d", attempt), func() (bool, error) {
		var s checkpointStats
		if err := rest(c, "/jobs/"+id+"/checkpoints", &s); err != nil {
			return false, err
		}
		return s.Latest.Completed != nil && s.Latest.Completed.Attempt >= attempt, nil
	})
}

// tideCmd runs the binary to completion and returns its exit error and combined output.
func tideCmd(t testing.TB, bin string, timeout time.Duration, args ...string) (string, error) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, bin, args...)
	out, err := cmd.CombinedOutput()
	return string(out), err
}
