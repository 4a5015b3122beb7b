package e2e

import (
	"encoding/json"
	"net/url"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/tidestream/tide/examples"
	"github.com/tidestream/tide/internal/testkit"
	"github.com/tidestream/tide/standalone"
)

// TestStartFromSavepoint takes a savepoint of the rate-limited checkable job at
// parallelism 2 through the CLI, cancels the job, shows that damaged or unfitting
// savepoints are refused before anything starts, then starts a new AM from the savepoint
// with 3 TaskManagers and a fresh checkpoint directory: the job finishes with exactly the
// expected output, and its own checkpoint ids continue above the savepoint's.
func TestStartFromSavepoint(t *testing.T) {
	out := t.TempDir()
	args := []string{"--records", "300000", "--keys", "13", "--rate", "5000", "--output", out}
	spDir := t.TempDir()
	first := startSavepointCluster(t, args, 2, t.TempDir(), "", "state.savepoints.allowed-dirs="+spDir)
	id := jobID(t, first)
	d := waitRunningAt(t, first, id, 2)
	waitCheckpointIn(t, first, id, d.Attempt)

	cli, err := tideCmd(t, tideBin, 2*time.Minute, "savepoint", id, "--dir", "file://"+spDir, "-m", first.RESTAddress())
	if err != nil {
		t.Fatalf("tide savepoint: %v\n%s", err, cli)
	}
	location := savepointIn(t, spDir)
	if !strings.Contains(cli, location) {
		t.Errorf("tide savepoint does not print the location %s:\n%s", location, cli)
	}
	cancelJob(t, first, id)
	// The job emits its counts when its input ends: nothing is committed yet, so all of
	// the output must come from the restored job, each key's count exactly once.
	if got, err := examples.ReadCommittedOutput(out); err != nil || len(got) != 0 {
		t.Fatalf("committed output before the restore = %v, %v; want none", got, err)
	}
	spID := savepointCheckpointID(t, location)

	refusals(t, location, args)

	ckpt := t.TempDir()
	second := startSavepointCluster(t, args, 3, ckpt, location)
	if id2 := jobID(t, second); id2 != id {
		t.Fatalf("restored job id %s, want %s", id2, id)
	}
	d2 := waitRunningAt(t, second, id, 3)
	// The restored job's own checkpoints: read while it runs (a finished job's checkpoints
	// are deleted, execution.checkpointing.externalized-checkpoint-retention's default).
	waitCheckpointIn(t, second, id, d2.Attempt)
	var s testkit.CheckpointStats
	if err := rest(second, "/jobs/"+id+"/checkpoints", &s); err != nil {
		t.Fatal(err)
	}
	if c := s.Latest.Completed; c == nil || c.ID <= spID {
		t.Errorf("latest checkpoint of the restored job %+v: ids must continue above the savepoint's %d", c, spID)
	}
	if _, err := os.ReadDir(filepath.Join(ckpt, id)); err != nil {
		t.Errorf("the restored job wrote no checkpoint to its own directory: %v", err)
	}
	waitExact(t, second, 4*time.Minute, out, args)
	if _, err := os.Stat(filepath.Join(ckpt, id)); !os.IsNotExist(err) {
		t.Errorf("the finished job's checkpoints %s/%s: %v, want them deleted (DELETE_ON_CANCELLATION)", ckpt, id, err)
	}
	if _, err := os.Stat(filepath.Join(spDir, filepath.Base(location), "_metadata")); err != nil {
		t.Errorf("the savepoint is gone after the restored job ran: %v", err)
	}
	logs, err := os.ReadFile(filepath.Join(second.LogDir(), "jobmanager.log"))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(logs), "starting from savepoint") {
		t.Errorf("the AM's log does not say it started from the savepoint")
	}
	// The output alone cannot tell a restore from a fresh start (the job would count every
	// number from scratch): the TaskManagers must have read their state from the savepoint.
	tmLogs, err := filepath.Glob(filepath.Join(second.LogDir(), "taskmanager-*.log"))
	if err != nil {
		t.Fatal(err)
	}
	restored := 0
	for _, f := range tmLogs {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		restored += strings.Count(string(b), "from="+location+" ")
	}
	if restored == 0 {
		t.Errorf("no TaskManager restored state from %s", location)
	}
}

// refusals starts AMs from broken or unfitting copies of the savepoint: each exits
// non-zero at once, naming the problem, and writes no checkpoint.
func refusals(t *testing.T, location string, args []string) {
	src := strings.TrimPrefix(location, "file://")
	noMetadata := copySavepoint(t, src)
	if err := os.Remove(filepath.Join(noMetadata, "_metadata")); err != nil {
		t.Fatal(err)
	}
	damaged := copySavepoint(t, src)
	states, err := filepath.Glob(filepath.Join(damaged, "*.state"))
	if err != nil || len(states) == 0 {
		t.Fatalf("no state files in the savepoint %s: %v", src, err)
	}
	if err := os.Truncate(states[0], 3); err != nil {
		t.Fatal(err)
	}
	maxPar := append(append([]string{}, args...), "--max-parallelism", "64")
	tests := []struct {
		name string
		job  string
		path string
		args []string
		want []string
	}{
		{"no such directory", examples.CheckableCountName, src + "-missing", args, []string{"no such directory"}},
		{"relative path", examples.CheckableCountName, "savepoints/x", args, []string{"expected an absolute path"}},
		{"without _metadata", examples.CheckableCountName, noMetadata, args, []string{"has no _metadata", "not a complete savepoint"}},
		{"damaged", examples.CheckableCountName, "file://" + damaged, args,
			[]string{"is damaged", filepath.Base(states[0]), "has 3 bytes"}},
		{"other job", examples.WordCountName, location, nil,
			[]string{"does not have", "--allowNonRestoredState"}},
		{"other maxParallelism", examples.CheckableCountName, location, maxPar,
			[]string{"maxParallelism 128 in the savepoint but 64", "vertex"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ckpt := t.TempDir()
			rpcPort := testkit.FreePort(t)
			restPort := testkit.FreePort(t)
			cmd := []string{"jobmanager", "--job-classname", tt.job, "--fromSavepoint", tt.path,
				"-Djobmanager.rpc.address=127.0.0.1", "-Djobmanager.rpc.port=" + strconv.Itoa(rpcPort),
				"-Drest.bind-address=127.0.0.1", "-Drest.port=" + strconv.Itoa(restPort),
				"-Dstate.checkpoints.dir=file://" + ckpt, "--"}
			jobArgs := tt.args
			if tt.job == examples.WordCountName {
				jobArgs = []string{"--input", t.TempDir(), "--output", t.TempDir()}
			}
			out, err := tideCmd(t, tideBin, time.Minute, append(cmd, jobArgs...)...)
			if code := exitCode(err); code == 0 || code == -1 {
				t.Fatalf("tide jobmanager --fromSavepoint %s: exit %v, want a refusal\n%s", tt.path, err, out)
			}
			for _, w := range tt.want {
				if !strings.Contains(out, w) {
					t.Errorf("output lacks %q:\n%s", w, out)
				}
			}
			if strings.Contains(out, "jobmanager ready") {
				t.Errorf("the AM started although the savepoint was refused:\n%s", out)
			}
			if entries, _ := os.ReadDir(ckpt); len(entries) != 0 {
				t.Errorf("the refused AM wrote to its checkpoint directory: %v", entries)
			}
		})
	}
}

// TestStandaloneJobScriptFromSavepoint: bin/standalone-job.sh hands --fromSavepoint and
// --allowNonRestoredState to the AM, and job arguments still reach the job.
func TestStandaloneJobScriptFromSavepoint(t *testing.T) {
	ckpt := t.TempDir()
	s := newScripted(t, "state.checkpoints.dir: file://"+ckpt)
	missing := filepath.Join(t.TempDir(), "savepoint-gone")
	out, err := s.run("standalone-job.sh", "start-foreground", "--job-classname", examples.CheckableCountName,
		"--fromSavepoint", missing, "--allowNonRestoredState", "--records", "10", "--output", t.TempDir())
	if code := exitCode(err); code == 0 || code == -1 {
		t.Fatalf("standalone-job.sh --fromSavepoint %s: exit %v, want a refusal\n%s", missing, err, out)
	}
	for _, w := range []string{"cannot start from savepoint", missing, "no such directory"} {
		if !strings.Contains(out, w) {
			t.Errorf("output lacks %q:\n%s", w, out)
		}
	}
}

// startSavepointCluster starts a local cluster of the checkable job with tms
// TaskManagers, checkpoints every 300 ms into ckpt, from the savepoint at from ("": fresh),
// with the extra -D settings.
func startSavepointCluster(t *testing.T, args []string, tms int, ckpt, from string, extra ...string) *standalone.LocalCluster {
	t.Helper()
	return startLocal(t, standalone.LocalOptions{Dynamic: append(reactive(ckpt, "300 ms"), extra...),
		JobName: examples.CheckableCountName, JobArgs: args, TaskManagers: tms, FromSavepoint: from})
}

// savepointIn returns the URI of the one savepoint directory in dir.
func savepointIn(t *testing.T, dir string) string {
	t.Helper()
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	if len(entries) != 1 || !strings.HasPrefix(entries[0].Name(), "savepoint-") {
		t.Fatalf("%s holds %v, want one savepoint-* directory", dir, entries)
	}
	return (&url.URL{Scheme: "file", Path: filepath.Join(dir, entries[0].Name())}).String()
}

// savepointCheckpointID reads the checkpoint id the savepoint's _metadata records.
func savepointCheckpointID(t *testing.T, location string) int64 {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(strings.TrimPrefix(location, "file://"), "_metadata"))
	if err != nil {
		t.Fatal(err)
	}
	var md struct {
		CheckpointID int64 `json:"checkpointId"`
	}
	if err := json.Unmarshal(data, &md); err != nil || md.CheckpointID < 1 {
		t.Fatalf("savepoint _metadata: checkpoint id %d, %v", md.CheckpointID, err)
	}
	return md.CheckpointID
}

// copySavepoint copies the savepoint directory src (flat: files only) to a new directory.
func copySavepoint(t *testing.T, src string) string {
	t.Helper()
	dst := filepath.Join(t.TempDir(), filepath.Base(src))
	if err := os.MkdirAll(dst, 0o755); err != nil {
		t.Fatal(err)
	}
	entries, err := os.ReadDir(src)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		if e.IsDir() {
			t.Fatalf("savepoint %s has a subdirectory %s; the copy expects files only", src, e.Name())
		}
		data, err := os.ReadFile(filepath.Join(src, e.Name()))
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dst, e.Name()), data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dst
}
