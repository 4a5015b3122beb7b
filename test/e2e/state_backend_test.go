package e2e

import (
	"encoding/json"
	"fmt"
	"os"
	"path"
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
	keys    int64  // --keys (0: records)
	rate    string // per source subtask
	timeout time.Duration
	managed string // taskmanager.memory.managed.size (empty: 8m)
	// hold: the first rescale waits until the dedup step has taken in this many numbers
	// (as many distinct keys in keyed state) and a checkpoint triggered after that
	// completed (0: it follows the first checkpoint).
	hold        int64
	interval    string // execution.checkpointing.interval (empty: 1 s)
	incremental bool   // execution.checkpointing.incremental
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
	n, k := strconv.FormatInt(run.records, 10), strconv.FormatInt(run.records, 10)
	if run.keys > 0 {
		k = strconv.FormatInt(run.keys, 10)
	}
	interval := run.interval
	if interval == "" {
		interval = "1 s"
	}
	stateDir := t.TempDir()
	managed := run.managed
	if managed == "" {
		managed = "8m" // 1 MiB memtables: a few MB of state spill
	}
	spill := []string{"state.backend.type=pebble", "state.backend.pebble.localdir=" + stateDir,
		"taskmanager.memory.managed.size=" + managed}
	if run.incremental {
		spill = append(spill, "execution.checkpointing.incremental=true")
	}
	var dyn []string
	var out string
	switch storage {
	case "file":
		dyn, out = reactive(t.TempDir(), interval), t.TempDir()
	case "hdfs":
		env := hadooptest.Require(t)
		uri, _ := hdfsCheckpointRoot(t, env)
		dyn, out = hdfsSettings(uri+"/checkpoints", interval), uri+"/out"
	}
	args := []string{"--records", n, "--keys", k, "--dedup", "--rate", run.rate, "--output", out}
	start := time.Now()
	c := startCluster(t, examples.CheckableCountName, args, 2, append(dyn, spill...))
	id := jobID(t, c)
	d := waitRunningAt(t, c, id, 2)
	waitCheckpointIn(t, c, id, d.Attempt)
	if run.hold > 0 {
		waitKeysInState(t, "http://"+c.RESTAddress(), id, run.hold, run.timeout)
	}

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
	if run.hold > 0 {
		left, _ := dedupRecordsIn("http://"+c.RESTAddress(), id)
		t.Logf("two TaskManagers killed %s after the start, the dedup step had taken in %d numbers of this attempt", time.Since(start).Round(time.Second), left)
	}
	d = waitRunningAt(t, c, id, 3)
	waitCheckpointIn(t, c, id, d.Attempt)
	waitExact(t, c, run.timeout, out, args)
	t.Logf("job finished %s after the start", time.Since(start).Round(time.Second))
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
// backend, takes a savepoint, continues it on pebble with incremental checkpoints from the
// savepoint, takes another (CANONICAL, the default: written in full by the subtasks, no
// pebble files, no reference to the job's shared/), and finishes it on hashmap again: the
// keyed state (the aggregate and the dedup MapState) crosses both switches and the output
// is exact.
func TestStateBackendSwitchThroughSavepoint(t *testing.T) {
	out := t.TempDir()
	args := []string{"--records", "200000", "--keys", "5000", "--dedup", "--rate", "4000", "--output", out}
	from := ""
	for i, backend := range []string{"hashmap", "pebble", "hashmap"} {
		spDir, ckpt := t.TempDir(), t.TempDir()
		dyn := append(reactive(ckpt, "300 ms"), "state.backend.type="+backend,
			"state.backend.pebble.localdir="+t.TempDir(), "state.savepoints.allowed-dirs="+spDir)
		if backend == "pebble" {
			dyn = append(dyn, "execution.checkpointing.incremental=true")
		}
		c := startLocal(t, standalone.LocalOptions{Dynamic: dyn, JobName: examples.CheckableCountName,
			JobArgs: args, TaskManagers: 2, FromSavepoint: from})
		id := jobID(t, c)
		d := waitRunningAt(t, c, id, 2)
		if from != "" {
			checkRestoredFrom(t, c, id, from)
		}
		waitCheckpointIn(t, c, id, d.Attempt)
		if i == 2 {
			waitExact(t, c, 4*time.Minute, out, args)
			break
		}
		if backend == "pebble" {
			// The job checkpoints incrementally: its tables are in <job>/shared/.
			shared, _ := filepath.Glob(filepath.Join(ckpt, id, "shared", "*"))
			if len(shared) == 0 {
				t.Fatalf("no shared files under %s/%s/shared: the pebble job does not checkpoint incrementally", ckpt, id)
			}
		}
		if cli, err := tideCmd(t, tideBin, 2*time.Minute, "savepoint", id, "--dir", "file://"+spDir, "-m", c.RESTAddress()); err != nil {
			t.Fatalf("tide savepoint on %s: %v\n%s", backend, err, cli)
		}
		// The savepoint is no restore point: the job's checkpoints go on after it.
		spID := savepointCheckpointID(t, savepointIn(t, spDir))
		testkit.WaitFor(t, "a checkpoint after the savepoint", func() (bool, error) {
			var s testkit.CheckpointStats
			if err := rest(c, "/jobs/"+id+"/checkpoints", &s); err != nil {
				return false, err
			}
			return s.Latest.Completed != nil && s.Latest.Completed.ID > spID, fmt.Errorf("latest completed %+v", s.Latest.Completed)
		})
		cancelJob(t, c, id)
		from = savepointIn(t, spDir)
		t.Logf("savepoint on %s: %s", backend, from)
		checkCanonicalSavepoint(t, strings.TrimPrefix(from, "file://"))
		if got, err := examples.ReadCommittedOutput(out); err != nil || len(got) != 0 {
			t.Fatalf("committed output before the end = %d lines, %v; want none", len(got), err)
		}
	}
}

// savepointMetadata is what the e2e tests read of a savepoint's _metadata.
type savepointMetadata struct {
	CheckpointID   int64  `json:"checkpointId"`
	CheckpointType string `json:"checkpointType"`
	FormatType     string `json:"formatType"`
	Subtasks       []struct {
		Handles []struct {
			Name string `json:"name"`
		} `json:"handles"`
	} `json:"subtasks"`
}

func readSavepointMetadata(t *testing.T, dir string) savepointMetadata {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(dir, "_metadata"))
	if err != nil {
		t.Fatal(err)
	}
	var md savepointMetadata
	if err := json.Unmarshal(data, &md); err != nil {
		t.Fatalf("savepoint %s: _metadata: %v", dir, err)
	}
	return md
}

// checkCanonicalSavepoint checks that the savepoint in dir is CANONICAL and stands alone:
// its _metadata says so, and it is flat: one .state file per subtask it lists, the
// coordinator state, _metadata, and no pebble database file or shared/ directory.
func checkCanonicalSavepoint(t *testing.T, dir string) {
	t.Helper()
	md := readSavepointMetadata(t, dir)
	if md.CheckpointType != "SAVEPOINT" || md.FormatType != "CANONICAL" {
		t.Fatalf("savepoint %s: _metadata says %q %q, want SAVEPOINT CANONICAL", dir, md.CheckpointType, md.FormatType)
	}
	listed := map[string]bool{"_metadata": true, "_coordinator": true}
	for _, st := range md.Subtasks {
		for _, h := range st.Handles {
			if strings.Contains(h.Name, "/") || !strings.HasSuffix(h.Name, ".state") {
				t.Errorf("savepoint %s lists %q: want only state files in its own directory", dir, h.Name)
			}
			listed[h.Name] = true
		}
	}
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		if e.IsDir() || !listed[e.Name()] {
			t.Errorf("savepoint %s holds %s, which its _metadata does not list", dir, e.Name())
		}
	}
}

// TestStateBackendNativeSavepoint takes a NATIVE savepoint of a pebble job with
// incremental checkpoints (a copy of its database files, shared tables included): a
// hashmap job refuses to start from it, naming the format and what to do, and a pebble
// job with incremental checkpoints goes on from it to the exact output.
func TestStateBackendNativeSavepoint(t *testing.T) {
	out := t.TempDir()
	args := []string{"--records", "120000", "--keys", "3000", "--dedup", "--rate", "4000", "--output", out}
	spDir := t.TempDir()
	pebble := func() []string {
		return append(reactive(t.TempDir(), "300 ms"), "state.backend.type=pebble", "execution.checkpointing.incremental=true",
			"state.backend.pebble.localdir="+t.TempDir(), "state.savepoints.allowed-dirs="+spDir)
	}
	c := startLocal(t, standalone.LocalOptions{Dynamic: pebble(), JobName: examples.CheckableCountName, JobArgs: args, TaskManagers: 2})
	id := jobID(t, c)
	d := waitRunningAt(t, c, id, 2)
	waitCheckpointIn(t, c, id, d.Attempt)
	if cli, err := tideCmd(t, tideBin, 2*time.Minute, "savepoint", id, "--formatType", "NATIVE", "--dir", "file://"+spDir, "-m", c.RESTAddress()); err != nil {
		t.Fatalf("tide savepoint --formatType NATIVE: %v\n%s", err, cli)
	}
	cancelJob(t, c, id)
	from := savepointIn(t, spDir)
	dir := strings.TrimPrefix(from, "file://")
	md := readSavepointMetadata(t, dir)
	if md.CheckpointType != "SAVEPOINT" || md.FormatType != "NATIVE" {
		t.Fatalf("savepoint %s: _metadata says %q %q, want SAVEPOINT NATIVE", dir, md.CheckpointType, md.FormatType)
	}
	if shared, _ := filepath.Glob(filepath.Join(dir, "shared", "*")); len(shared) == 0 {
		t.Fatalf("NATIVE savepoint %s has no copied shared tables", dir)
	}

	// A hashmap job refuses it at once.
	rpcPort, restPort := testkit.FreePort(t), testkit.FreePort(t)
	cmd := []string{"jobmanager", "--job-classname", examples.CheckableCountName, "--fromSavepoint", from,
		"-Djobmanager.rpc.address=127.0.0.1", "-Djobmanager.rpc.port=" + strconv.Itoa(rpcPort),
		"-Drest.bind-address=127.0.0.1", "-Drest.port=" + strconv.Itoa(restPort),
		"-Dstate.checkpoints.dir=file://" + t.TempDir(), "-Dstate.backend.type=hashmap", "--"}
	refused, err := tideCmd(t, tideBin, time.Minute, append(cmd, args...)...)
	if code := exitCode(err); code == 0 || code == -1 {
		t.Fatalf("a hashmap job from the NATIVE savepoint: exit %v, want a refusal\n%s", err, refused)
	}
	for _, w := range []string{"cannot start from savepoint", "NATIVE format", "state.backend.type hashmap",
		"state.backend.type pebble", "CANONICAL format"} {
		if !strings.Contains(refused, w) {
			t.Errorf("refusal lacks %q:\n%s", w, refused)
		}
	}

	// A pebble job with incremental checkpoints goes on from it.
	c = startLocal(t, standalone.LocalOptions{Dynamic: pebble(), JobName: examples.CheckableCountName, JobArgs: args,
		TaskManagers: 2, FromSavepoint: from})
	id = jobID(t, c)
	waitRunningAt(t, c, id, 2)
	checkRestoredFrom(t, c, id, from)
	waitExact(t, c, 4*time.Minute, out, args)
}

// TestStateBackendSwitchThroughSavepointHDFS: with checkpoints and savepoints on hdfs://,
// a pebble job with incremental checkpoints takes a CANONICAL savepoint (its subtasks
// write it straight into the savepoint's directory on HDFS: state files only) and a
// hashmap job goes on from it to the exact output.
func TestStateBackendSwitchThroughSavepointHDFS(t *testing.T) {
	env := hadooptest.Require(t)
	uri, st := hdfsCheckpointRoot(t, env)
	out := t.TempDir()
	args := []string{"--records", "120000", "--keys", "3000", "--dedup", "--rate", "4000", "--output", out}
	settings := func(backend string) []string {
		return hdfsSettings(uri+"/checkpoints", "300 ms", "state.backend.type="+backend, "execution.checkpointing.incremental=true",
			"state.backend.pebble.localdir="+t.TempDir(), "state.savepoints.dir="+uri+"/savepoints")
	}
	c := startLocal(t, standalone.LocalOptions{Dynamic: settings("pebble"), JobName: examples.CheckableCountName, JobArgs: args, TaskManagers: 2})
	id := jobID(t, c)
	d := waitRunningAt(t, c, id, 2)
	waitCheckpointIn(t, c, id, d.Attempt)
	cli, err := tideCmd(t, tideBin, 2*time.Minute, "savepoint", id, "-m", c.RESTAddress())
	if err != nil {
		t.Fatalf("tide savepoint: %v\n%s", err, cli)
	}
	_, location, ok := strings.Cut(strings.TrimSpace(cli), "completed: ")
	if !ok || !strings.HasPrefix(location, uri+"/savepoints/savepoint-") {
		t.Fatalf("tide savepoint printed no savepoint under %s/savepoints:\n%s", uri, cli)
	}
	cancelJob(t, c, id)
	files, err := st.List(t.Context(), "savepoints/"+location[strings.LastIndex(location, "/")+1:])
	if err != nil {
		t.Fatal(err)
	}
	var states int
	for _, f := range files {
		switch {
		case f.IsDir:
			t.Errorf("savepoint %s holds a directory %s", location, f.Name)
		case strings.HasSuffix(f.Name, ".state"):
			states++
		case f.Name != "_metadata" && f.Name != "_coordinator":
			t.Errorf("savepoint %s holds %s: want state files, _coordinator and _metadata only", location, f.Name)
		}
	}
	if states == 0 {
		t.Fatalf("savepoint %s holds no state file: %v", location, files)
	}
	c = startLocal(t, standalone.LocalOptions{Dynamic: settings("hashmap"), JobName: examples.CheckableCountName, JobArgs: args,
		TaskManagers: 2, FromSavepoint: location})
	id = jobID(t, c)
	waitRunningAt(t, c, id, 2)
	checkRestoredFrom(t, c, id, location)
	waitExact(t, c, 4*time.Minute, out, args)
}

// checkRestoredFrom checks that the running job restored the savepoint at location.
func checkRestoredFrom(t *testing.T, c *standalone.LocalCluster, id, location string) {
	t.Helper()
	var s testkit.CheckpointStats
	if err := rest(c, "/jobs/"+id+"/checkpoints", &s); err != nil {
		t.Fatal(err)
	}
	if r := s.Latest.Restored; r == nil || path.Base(r.ExternalPath) != path.Base(location) {
		t.Fatalf("the job restored %+v, want the savepoint %s", r, location)
	}
}
