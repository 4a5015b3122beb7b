package am_test

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/tidestream/tide/core"
	"github.com/tidestream/tide/examples"
	"github.com/tidestream/tide/internal/testkit"
)

// savepointOp polls a savepoint or stop trigger until it completes and returns its location.
func (c *cluster) savepointOp(t *testing.T, requestID string) string {
	t.Helper()
	var location string
	testkit.WaitFor(t, "the savepoint "+requestID, func() (bool, error) {
		var op struct {
			Status    struct{ ID string } `json:"status"`
			Operation struct {
				Location     string          `json:"location"`
				FailureCause json.RawMessage `json:"failure-cause"`
			} `json:"operation"`
		}
		if err := c.getJSON("/jobs/"+jobID+"/savepoints/"+requestID, &op); err != nil {
			return false, err
		}
		if op.Status.ID == "FAILED" {
			t.Fatalf("savepoint %s failed: %s", requestID, op.Operation.FailureCause)
		}
		location = op.Operation.Location
		return op.Status.ID == "COMPLETED", fmt.Errorf("status %s", op.Status.ID)
	})
	return location
}

// spStats is what these tests read of GET /jobs/:jobid/checkpoints.
type spStats struct {
	Latest struct {
		Completed *spEntry `json:"completed"`
		Savepoint *spEntry `json:"savepoint"`
	} `json:"latest"`
	History []spEntry `json:"history"`
}

type spEntry struct {
	ID              int64  `json:"id"`
	Status          string `json:"status"`
	IsSavepoint     bool   `json:"is_savepoint"`
	CheckpointType  string `json:"checkpoint_type"`
	SavepointFormat string `json:"savepointFormat"`
}

// TestCanonicalSavepointIsNotACheckpoint takes a savepoint (CANONICAL, the default) of a
// job that checkpoints periodically: it takes a checkpoint id, shows in the history as
// SAVEPOINT and as latest.savepoint, its files are in its own directory only (no chk-<n>
// of its id in the job's checkpoints), and the checkpoints go on after it. A
// stop-with-savepoint then writes another and cancels the job.
func TestCanonicalSavepointIsNotACheckpoint(t *testing.T) {
	ckpt, spDir := t.TempDir(), t.TempDir()
	args := []string{"--records", "1000000", "--keys", "50", "--rate", "2000", "--output", t.TempDir()}
	c := startCluster(t, clusterOptions{job: examples.CheckableCountName, args: args, ckptDir: ckpt, interval: 100 * time.Millisecond,
		noCheckpointConf: true, retained: 1, dynamic: []string{"state.savepoints.dir=file://" + spDir}})
	c.addTM("tm-1", 1)
	c.addTM("tm-2", 1)
	c.waitRunningAt(t, 2)
	var trig struct {
		RequestID string `json:"request-id"`
	}
	if err := c.postJSON("/jobs/"+jobID+"/savepoints", map[string]any{}, &trig); err != nil {
		t.Fatal(err)
	}
	location := c.savepointOp(t, trig.RequestID)
	dir := strings.TrimPrefix(location, "file://")
	if filepath.Dir(dir) != spDir {
		t.Fatalf("savepoint at %s, want it under %s", location, spDir)
	}
	var md struct {
		CheckpointID   int64  `json:"checkpointId"`
		CheckpointType string `json:"checkpointType"`
		FormatType     string `json:"formatType"`
		Subtasks       []struct {
			Handles []struct{ Name string } `json:"handles"`
		} `json:"subtasks"`
	}
	data, err := os.ReadFile(filepath.Join(dir, "_metadata"))
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(data, &md); err != nil {
		t.Fatal(err)
	}
	if md.CheckpointType != "SAVEPOINT" || md.FormatType != "CANONICAL" || len(md.Subtasks) == 0 {
		t.Fatalf("savepoint _metadata: %s", data)
	}
	for _, st := range md.Subtasks {
		for _, h := range st.Handles {
			if _, err := os.Stat(filepath.Join(dir, h.Name)); err != nil || strings.Contains(h.Name, "/") {
				t.Errorf("savepoint lists %q: want a file in its own directory (%v)", h.Name, err)
			}
		}
	}
	if _, err := os.Stat(filepath.Join(ckpt, jobID, fmt.Sprintf("chk-%d", md.CheckpointID))); !os.IsNotExist(err) {
		t.Errorf("the job's checkpoints hold chk-%d of the savepoint: %v", md.CheckpointID, err)
	}
	testkit.WaitFor(t, "a checkpoint after the savepoint", func() (bool, error) {
		var s spStats
		if err := c.getJSON("/jobs/"+jobID+"/checkpoints", &s); err != nil {
			return false, err
		}
		if sp := s.Latest.Savepoint; sp == nil || sp.ID != md.CheckpointID || !sp.IsSavepoint || sp.CheckpointType != "SAVEPOINT" || sp.SavepointFormat != "CANONICAL" {
			return false, fmt.Errorf("latest.savepoint %+v, want savepoint %d", sp, md.CheckpointID)
		}
		for _, e := range s.History {
			if e.ID == md.CheckpointID && (e.CheckpointType != "SAVEPOINT" || e.Status != "COMPLETED") {
				return false, fmt.Errorf("history entry %+v", e)
			}
		}
		return s.Latest.Completed != nil && s.Latest.Completed.ID > md.CheckpointID && s.Latest.Completed.CheckpointType == "CHECKPOINT",
			fmt.Errorf("latest completed %+v", s.Latest.Completed)
	})

	if err := c.postJSON("/jobs/"+jobID+"/stop", map[string]any{}, &trig); err != nil {
		t.Fatal(err)
	}
	// The AM stops serving REST as soon as the job is CANCELED, which can come before a
	// poll of the operation: the savepoint written before the cancel is checked on disk.
	c.waitEnded(t, time.Minute, core.StatusCanceled)
	entries, err := os.ReadDir(spDir)
	if err != nil {
		t.Fatal(err)
	}
	var stopped []string
	for _, e := range entries {
		if d := filepath.Join(spDir, e.Name()); d != dir && strings.HasPrefix(e.Name(), "savepoint-") {
			if _, err := os.Stat(filepath.Join(d, "_metadata")); err == nil {
				stopped = append(stopped, d)
			}
		}
	}
	if len(stopped) != 1 {
		t.Fatalf("stop-with-savepoint: complete savepoints under %s besides %s: %v, want one", spDir, dir, stopped)
	}
}

// TestCanonicalSavepointFailure: a savepoint whose directory the subtasks cannot write
// (its storage root is a file) fails, naming the cause, without counting against
// execution.checkpointing.tolerable-failed-checkpoints 0: the job keeps its attempt and
// its checkpoints. A checkpoint triggered over REST meanwhile is a checkpoint.
func TestCanonicalSavepointFailure(t *testing.T) {
	spDir := t.TempDir()
	blocker := filepath.Join(spDir, "blocker")
	if err := os.WriteFile(blocker, []byte("not a directory"), 0o644); err != nil {
		t.Fatal(err)
	}
	args := []string{"--records", "1000000", "--keys", "50", "--rate", "2000", "--output", t.TempDir()}
	c := startCluster(t, clusterOptions{job: examples.CheckableCountName, args: args, ckptDir: t.TempDir(), interval: 100 * time.Millisecond,
		noCheckpointConf: true, retained: 1, dynamic: []string{"state.savepoints.dir=file://" + spDir,
			"execution.checkpointing.tolerable-failed-checkpoints=0"}})
	c.addTM("tm-1", 1)
	info := c.waitRunningAt(t, 1)
	var trig struct {
		RequestID string `json:"request-id"`
	}
	if err := c.postJSON("/jobs/"+jobID+"/savepoints", map[string]any{"target-directory": "file://" + blocker}, &trig); err != nil {
		t.Fatal(err)
	}
	testkit.WaitFor(t, "the savepoint to fail", func() (bool, error) {
		var op struct {
			Status    struct{ ID string } `json:"status"`
			Operation struct {
				FailureCause struct {
					StackTrace string `json:"stack-trace"`
				} `json:"failure-cause"`
			} `json:"operation"`
		}
		if err := c.getJSON("/jobs/"+jobID+"/savepoints/"+trig.RequestID, &op); err != nil {
			return false, err
		}
		if op.Status.ID == "COMPLETED" {
			t.Fatalf("savepoint into %s completed", blocker)
		}
		cause := op.Operation.FailureCause.StackTrace
		if op.Status.ID == "FAILED" && !strings.Contains(cause, "blocker") {
			t.Fatalf("savepoint failure does not name the target: %s", cause)
		}
		return op.Status.ID == "FAILED", fmt.Errorf("status %s", op.Status.ID)
	})
	var ck struct {
		RequestID string `json:"request-id"`
	}
	if err := c.postJSON("/jobs/"+jobID+"/checkpoints", map[string]any{}, &ck); err != nil {
		t.Fatal(err)
	}
	testkit.WaitFor(t, "the checkpoint triggered over REST", func() (bool, error) {
		var op struct {
			Status    struct{ ID string } `json:"status"`
			Operation struct {
				CheckpointID int64 `json:"checkpointId"`
			} `json:"operation"`
		}
		if err := c.getJSON("/jobs/"+jobID+"/checkpoints/"+ck.RequestID, &op); err != nil {
			return false, err
		}
		if op.Status.ID == "FAILED" {
			t.Fatalf("checkpoint failed")
		}
		return op.Status.ID == "COMPLETED", fmt.Errorf("status %s", op.Status.ID)
	})
	if now := c.waitRunningAt(t, 1); now.Attempt != info.Attempt {
		t.Fatalf("the failed savepoint failed the job over: attempt %d, was %d", now.Attempt, info.Attempt)
	}
	var s spStats
	if err := c.getJSON("/jobs/"+jobID+"/checkpoints", &s); err != nil {
		t.Fatal(err)
	}
	if s.Latest.Savepoint != nil {
		t.Errorf("latest.savepoint = %+v after a failed savepoint", s.Latest.Savepoint)
	}
	failed := false
	for _, e := range s.History {
		failed = failed || (e.CheckpointType == "SAVEPOINT" && e.Status == "FAILED")
	}
	if !failed {
		t.Errorf("no failed SAVEPOINT in the history: %+v", s.History)
	}
}
