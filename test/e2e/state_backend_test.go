package e2e

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/tidestream/tide/examples"
	"github.com/tidestream/tide/internal/testkit"
	"github.com/tidestream/tide/standalone"
	"github.com/tidestream/tide/test/hadoop/hadooptest"
)

// spillRun sizes one run of TestStateBackendSpillRescale: CheckableCount --dedup with one
// key per number, so the keyed state holds two entries per number (its count and its
// entry in the dedup MapState).
type spillRun struct {
	records int64
	rate    string // per source subtask
	timeout time.Duration
}

// spillDefault keeps go test ./... within a few minutes; the 10M-key run is behind the
// statelarge build tag (make state-large).
var spillDefault = spillRun{records: 300_000, rate: "2000", timeout: 4 * time.Minute}

// TestStateBackendSpillRescale runs CheckableCount --dedup on the pebble backend with a
// managed memory so small that the state spills into SST files, with checkpoints and
// output on file:// and on hdfs://, rescaling from parallelism 2 to 5 to 3 (the last
// step kills two TaskManagers with SIGKILL): the output is exact. The killed
// TaskManagers' instance directories stay behind; a TaskManager started afterwards on the
// same state.backend.pebble.localdir removes them.
func TestStateBackendSpillRescale(t *testing.T) {
	for _, storage := range []string{"file", "hdfs"} {
		t.Run(storage, func(t *testing.T) { testSpillRescale(t, storage, spillDefault) })
	}
}

func testSpillRescale(t *testing.T, storage string, run spillRun) {
	n := strconv.FormatInt(run.records, 10)
	stateDir := t.TempDir()
	spill := []string{"state.backend.type=pebble", "state.backend.pebble.localdir=" + stateDir,
		"taskmanager.memory.managed.size=8m"} // 1 MiB memtables: a few MB of state spill
	var dyn []string
	var out string
	switch storage {
	case "file":
		dyn, out = reactive(t.TempDir(), "1 s"), t.TempDir()
	case "hdfs":
		env := hadooptest.Require(t)
		uri, _ := hdfsCheckpointRoot(t, env)
		dyn, out = hdfsSettings(uri+"/checkpoints", "1 s"), uri+"/out"
	}
	args := []string{"--records", n, "--keys", n, "--dedup", "--rate", run.rate, "--output", out}
	c := startCluster(t, examples.CheckableCountName, args, 2, append(dyn, spill...))
	id := jobID(t, c)
	d := waitRunningAt(t, c, id, 2)
	waitCheckpointIn(t, c, id, d.Attempt)

	for range 3 {
		if _, err := c.AddTaskManager(t.Context()); err != nil {
			t.Fatal(err)
		}
	}
	d = waitRunningAt(t, c, id, 5)
	waitCheckpointIn(t, c, id, d.Attempt)
	testkit.WaitFor(t, "keyed state spilled into SST files", func() (bool, error) {
		ssts, _ := filepath.Glob(filepath.Join(stateDir, "tide-pebble-*", "*.sst"))
		return len(ssts) > 0, fmt.Errorf("no SST files under %s yet", stateDir)
	})
	ssts, _ := filepath.Glob(filepath.Join(stateDir, "tide-pebble-*", "*.sst"))
	t.Logf("at parallelism 5: %d SST files under %s", len(ssts), stateDir)

	tms := c.TaskManagers()
	for _, tm := range tms[len(tms)-2:] {
		if err := c.Signal(tm, syscall.SIGKILL); err != nil {
			t.Fatal(err)
		}
	}
	d = waitRunningAt(t, c, id, 3)
	waitCheckpointIn(t, c, id, d.Attempt)
	waitExact(t, c, run.timeout, out, args)
	if err := c.Stop(t.Context()); err != nil { // the TaskManagers have closed their instances
		t.Fatal(err)
	}

	// The killed TaskManagers left their instance directories; the others removed theirs.
	stale, _ := filepath.Glob(filepath.Join(stateDir, "tide-pebble-*"))
	if len(stale) == 0 {
		t.Fatalf("no instance directory left under %s by the killed TaskManagers", stateDir)
	}
	cleanStaleWithTaskManager(t, stateDir, len(stale))
}

// cleanStaleWithTaskManager starts a TaskManager on stateDir with no AM to join: at start
// it removes the want stale instance directories, logs each, and gives up on the AM.
func cleanStaleWithTaskManager(t *testing.T, stateDir string, want int) {
	t.Helper()
	outText, _ := tideCmd(t, tideBin, time.Minute, "taskmanager", "--connect-timeout", "1s",
		"-D", "state.backend.pebble.localdir="+stateDir, "-D", "jobmanager.rpc.address=127.0.0.1",
		"-D", "jobmanager.rpc.port="+strconv.Itoa(testkit.FreePort(t)))
	if got := strings.Count(outText, "removed a stale pebble directory"); got != want {
		t.Fatalf("the new TaskManager removed %d stale directories, want %d:\n%s", got, want, outText)
	}
	if left, _ := filepath.Glob(filepath.Join(stateDir, "tide-pebble-*")); len(left) != 0 {
		t.Fatalf("stale instance directories left: %v", left)
	}
}

// TestStateBackendSwitchThroughSavepoint runs CheckableCount --dedup on the hashmap
// backend, takes a savepoint, continues it on pebble from the savepoint, takes another,
// and finishes it on hashmap again: the keyed state (the aggregate and the dedup
// MapState) crosses both switches and the output is exact.
func TestStateBackendSwitchThroughSavepoint(t *testing.T) {
	out := t.TempDir()
	args := []string{"--records", "200000", "--keys", "5000", "--dedup", "--rate", "4000", "--output", out}
	from := ""
	for i, backend := range []string{"hashmap", "pebble", "hashmap"} {
		spDir := t.TempDir()
		dyn := append(reactive(t.TempDir(), "300 ms"), "state.backend.type="+backend,
			"state.backend.pebble.localdir="+t.TempDir(), "state.savepoints.allowed-dirs="+spDir)
		c := startLocal(t, standalone.LocalOptions{Dynamic: dyn, JobName: examples.CheckableCountName,
			JobArgs: args, TaskManagers: 2, FromSavepoint: from})
		id := jobID(t, c)
		d := waitRunningAt(t, c, id, 2)
		waitCheckpointIn(t, c, id, d.Attempt)
		if i == 2 {
			waitExact(t, c, 4*time.Minute, out, args)
			break
		}
		if cli, err := tideCmd(t, tideBin, 2*time.Minute, "savepoint", id, "--dir", "file://"+spDir, "-m", c.RESTAddress()); err != nil {
			t.Fatalf("tide savepoint on %s: %v\n%s", backend, err, cli)
		}
		if cli, err := tideCmd(t, tideBin, 2*time.Minute, "cancel", id, "--wait", "60s", "-m", c.RESTAddress()); err != nil {
			t.Fatalf("tide cancel: %v\n%s", err, cli)
		}
		select {
		case <-c.AMDone():
		case <-time.After(2 * time.Minute):
			t.Fatal("the cancelled job's AM did not exit")
		}
		from = savepointIn(t, spDir)
		t.Logf("savepoint on %s: %s", backend, from)
		if got, err := examples.ReadCommittedOutput(out); err != nil || len(got) != 0 {
			t.Fatalf("committed output before the end = %d lines, %v; want none", len(got), err)
		}
		if _, err := os.Stat(strings.TrimPrefix(from, "file://")); err != nil {
			t.Fatal(err)
		}
	}
}
