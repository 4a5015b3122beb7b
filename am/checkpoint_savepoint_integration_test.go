package am_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/tidestream/tide/am"
	"github.com/tidestream/tide/core"
	"github.com/tidestream/tide/examples"
	"github.com/tidestream/tide/internal/testkit"
)

func (c *cluster) postJSON(path string, body any, v any) error {
	b, err := json.Marshal(body)
	if err != nil {
		return err
	}
	code, _, out, err := testkit.Send(context.Background(), http.MethodPost, "http://"+c.am.RESTAddr()+path, string(b), "Content-Type", "application/json")
	if err != nil {
		return err
	}
	if code != http.StatusAccepted {
		return fmt.Errorf("POST %s: %d: %s", path, code, out)
	}
	return json.Unmarshal(out, v)
}

// waitRestoredFrom waits for the job RUNNING at parallelism p in an attempt after
// attempt, and checks which checkpoint that attempt restored: checkpoint id from path,
// or with path "" one of the job's own checkpoints numbered id or above.
func (c *cluster) waitRestoredFrom(t *testing.T, p int, after int64, id int64, path string) int64 {
	t.Helper()
	var info testkit.JobDetails
	testkit.WaitFor(t, fmt.Sprintf("a new attempt at parallelism %d", p), func() (bool, error) {
		info = c.waitRunningAt(t, p)
		return info.Attempt > after, fmt.Errorf("attempt %d", info.Attempt)
	})
	var s testkit.CheckpointStats
	if err := c.getJSON("/jobs/"+jobID+"/checkpoints", &s); err != nil {
		t.Fatal(err)
	}
	r := s.Latest.Restored
	switch {
	case r == nil:
		t.Fatalf("attempt %d at parallelism %d restored nothing", info.Attempt, p)
	case path == "" && (r.ID < id || !strings.Contains(r.ExternalPath, "/"+jobID+"/chk-")):
		t.Fatalf("attempt %d at parallelism %d restored %+v, want one of the job's own checkpoints from %d on", info.Attempt, p, r, id)
	case path != "" && (r.ID != id || r.ExternalPath != path):
		t.Fatalf("attempt %d at parallelism %d restored %+v, want checkpoint %d from %q", info.Attempt, p, r, id, path)
	}
	return info.Attempt
}

// TestSavepointRestoreUntilFirstOwnCheckpoint takes a savepoint over REST, starts a new AM
// from it without periodic checkpoints, and rescales and fails it over: every attempt
// restores the savepoint until the job's first own checkpoint (triggered over REST, id
// above the savepoint's), which later attempts restore instead. Checkpoints triggered
// until the end then let the bounded job finish with the exact output.
func TestSavepointRestoreUntilFirstOwnCheckpoint(t *testing.T) {
	out := t.TempDir()
	args := []string{"--records", "120000", "--keys", "7", "--rate", "4000", "--output", out}
	spDir := t.TempDir()
	first := startCluster(t, clusterOptions{job: examples.CheckableCountName, args: args, ckptDir: t.TempDir(), interval: 100 * time.Millisecond,
		noCheckpointConf: true, retained: 1, dynamic: []string{"state.savepoints.dir=file://" + spDir}})
	first.addTM("tm-1", 1)
	first.addTM("tm-2", 1)
	first.waitRunningAt(t, 2)
	var trig struct {
		RequestID string `json:"request-id"`
	}
	if err := first.postJSON("/jobs/"+jobID+"/savepoints", map[string]any{"target-directory": "file://" + spDir}, &trig); err != nil {
		t.Fatal(err)
	}
	var location string
	testkit.WaitFor(t, "the savepoint", func() (bool, error) {
		var op struct {
			Status    struct{ ID string } `json:"status"`
			Operation struct {
				Location string `json:"location"`
			} `json:"operation"`
		}
		if err := first.getJSON("/jobs/"+jobID+"/savepoints/"+trig.RequestID, &op); err != nil {
			return false, err
		}
		location = op.Operation.Location
		return op.Status.ID == "COMPLETED", fmt.Errorf("status %s", op.Status.ID)
	})
	var s testkit.CheckpointStats
	if err := first.getJSON("/jobs/"+jobID+"/checkpoints", &s); err != nil {
		t.Fatal(err)
	}
	first.stop()

	second := startCluster(t, clusterOptions{job: examples.CheckableCountName, args: args, ckptDir: t.TempDir(),
		noCheckpointConf: true, retained: 1, fromSavepoint: location})
	var spID int64
	second.addTM("tm-a", 1)
	info := second.waitRunningAt(t, 1)
	if err := second.getJSON("/jobs/"+jobID+"/checkpoints", &s); err != nil {
		t.Fatal(err)
	}
	if s.Latest.Restored == nil || s.Latest.Restored.ExternalPath != location {
		t.Fatalf("first attempt restored %+v, want the savepoint %s", s.Latest.Restored, location)
	}
	spID = s.Latest.Restored.ID
	second.addTM("tm-b", 1)
	attempt := second.waitRestoredFrom(t, 2, info.Attempt, spID, location)
	second.stopTM("tm-b")
	attempt = second.waitRestoredFrom(t, 1, attempt, spID, location)

	// The first own checkpoint: its id continues above the savepoint's.
	var own int64
	testkit.WaitFor(t, "the job's first own checkpoint", func() (bool, error) {
		if err := second.postJSON("/jobs/"+jobID+"/checkpoints", map[string]any{}, &trig); err != nil {
			return false, err
		}
		if err := second.getJSON("/jobs/"+jobID+"/checkpoints", &s); err != nil {
			return false, err
		}
		if s.Latest.Completed == nil {
			return false, fmt.Errorf("no checkpoint completed")
		}
		own = s.Latest.Completed.ID
		return true, nil
	})
	if own <= spID {
		t.Fatalf("first own checkpoint %d, want an id above the savepoint's %d", own, spID)
	}
	second.addTM("tm-c", 1)
	second.waitRestoredFrom(t, 2, attempt, own, "")

	// Checkpoints on demand until the bounded job has taken its final one.
	var res am.Result
	deadline := time.After(3 * time.Minute)
	for done := false; !done; {
		select {
		case res = <-second.result:
			done = true
		case <-deadline:
			t.Fatal("the restored job did not finish")
		case <-time.After(200 * time.Millisecond):
			_ = second.postJSON("/jobs/"+jobID+"/checkpoints", map[string]any{}, &trig)
		}
	}
	if res.Status != core.StatusFinished {
		t.Fatalf("job ended %s: %s", res.Status, res.Cause)
	}
	testkit.CheckExactOutput(t, out, args)
}
