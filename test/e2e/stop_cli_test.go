package e2e

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/tidestream/tide/api"
	"github.com/tidestream/tide/examples"
	"github.com/tidestream/tide/internal/testkit"
)

// TestStopErrors: tide stop refuses, clearly and naming the job or its state, what it
// cannot do: a bad flag or missing JOB (exit 2, nothing sent), an unknown job, a job not
// RUNNING yet, --drain, a savepoint path outside the allowed directories (exit 1); then
// it stops the running job with --json: the savepoint is on disk with its _metadata and
// the job CANCELED.
func TestStopErrors(t *testing.T) {
	base := t.TempDir()
	s := newScripted(t,
		"execution.checkpointing.interval: 1 s",
		"state.checkpoints.dir: file://"+filepath.Join(base, "checkpoints"),
		"state.savepoints.dir: file://"+filepath.Join(base, "savepoints"),
	)
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"stop"}, "needs JOB"},
		{[]string{"stop", "a", "b"}, "takes one JOB"},
		{[]string{"stop", "TopSpeedWindowing", "--formatType", "FULL"}, `--formatType "FULL": expected CANONICAL or NATIVE`},
		{[]string{"stop", "TopSpeedWindowing", "--bogus"}, "bogus"},
	} {
		out, err := s.tide(tc.args...)
		if code := exitCode(err); code != 2 || !strings.Contains(out, tc.want) {
			t.Errorf("tide %q: exit %d (want 2), want %q in:\n%s", tc.args, code, tc.want, out)
		}
	}

	s.mustRun("standalone-job.sh", "start", "--job-classname", examples.TopSpeedWindowingName)
	testkit.WaitFor(t, "the job listed CREATED", func() (bool, error) {
		out, err := s.tide("list")
		return err == nil && regexp.MustCompile(`TopSpeedWindowing\s+CREATED`).MatchString(out), errors.New(out)
	})
	refused := func(want []string, args ...string) {
		t.Helper()
		out, err := s.tide(args...)
		if code := exitCode(err); code != 1 {
			t.Fatalf("tide %q: exit %d, want 1:\n%s", args, code, out)
		}
		for _, w := range want {
			if !strings.Contains(out, w) {
				t.Errorf("tide %q says no %q:\n%s", args, w, out)
			}
		}
		if strings.Contains(out, "triggered") {
			t.Errorf("tide %q triggered something:\n%s", args, out)
		}
		t.Logf("tide %q:\n%s", args, out)
	}
	refused([]string{`JOB "NoSuchJob"`, "no job with that id", "TopSpeedWindowing"}, "stop", "NoSuchJob")
	refused([]string{"TopSpeedWindowing", "is CREATED", "a stop-with-savepoint needs it RUNNING", "--wait"}, "stop", "TopSpeedWindowing")

	s.mustRun("taskmanager.sh", "start")
	testkit.WaitFor(t, "the job RUNNING", func() (bool, error) {
		out, err := s.tide("list")
		return err == nil && regexp.MustCompile(`TopSpeedWindowing\s+RUNNING`).MatchString(out), errors.New(out)
	})
	refused([]string{"drain", "unbounded"}, "stop", "TopSpeedWindowing", "--drain")
	outside := "file://" + filepath.Join(base, "elsewhere")
	refused([]string{outside, "state.savepoints"}, "stop", "TopSpeedWindowing", "--savepointPath", outside)

	out, err := s.tide("stop", "TopSpeedWindowing", "--json")
	if err != nil {
		t.Fatalf("tide stop --json: %v\n%s", err, out)
	}
	var res struct {
		JID       string              `json:"jid"`
		State     string              `json:"state"`
		Operation api.OperationResult `json:"operation"`
	}
	if err := json.Unmarshal([]byte(out), &res); err != nil {
		t.Fatalf("tide stop --json printed no JSON (%v):\n%s", err, out)
	}
	prefix := "file://" + filepath.Join(base, "savepoints") + "/savepoint-"
	if res.State != "CANCELED" || !strings.HasPrefix(res.Operation.Location, prefix) {
		t.Fatalf("tide stop --json: state %q, location %q (want CANCELED and a savepoint under %s)", res.State, res.Operation.Location, prefix)
	}
	if _, err := os.Stat(filepath.Join(strings.TrimPrefix(res.Operation.Location, "file://"), "_metadata")); err != nil {
		t.Errorf("the stop's savepoint has no _metadata: %v", err)
	}
}

// TestStopResultReadableAfterTheJobEnded: the AM keeps its REST API up after a
// stop-with-savepoint cancelled the job, until the stop's result has been read
// (rest.shutdown.grace-period bounds the wait). A client that polls only the job's state
// sees CANCELED, tide stop of the ended job says so, changes are refused, and the stop's
// result is there to read; then the AM exits, saying why.
func TestStopResultReadableAfterTheJobEnded(t *testing.T) {
	base := t.TempDir()
	s := newScripted(t,
		"execution.checkpointing.interval: 1 s",
		"state.checkpoints.dir: file://"+filepath.Join(base, "checkpoints"),
		"state.savepoints.dir: file://"+filepath.Join(base, "savepoints"),
		"rest.shutdown.grace-period: 10 min", // the test, not the deadline, ends the wait
	)
	s.mustRun("standalone-job.sh", "start", "--job-classname", examples.TopSpeedWindowingName)
	s.mustRun("taskmanager.sh", "start")
	id := s.jobID()
	s.waitRunning(id, 1)
	c, err := api.NewClient(api.Config{Address: s.restAddr})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	trigger, err := c.StopWithSavepoint(ctx, id, api.StopRequest{})
	if err != nil {
		t.Fatalf("POST /jobs/%s/stop: %v", id, err)
	}
	testkit.WaitFor(t, "the job CANCELED", func() (bool, error) {
		state, err := c.JobState(ctx, id)
		return err == nil && state == "CANCELED", errors.New(state)
	})
	// The AM logs it once the job has ended, which a client may see first.
	testkit.WaitFor(t, "the AM's log to say it keeps REST up for the unread result", func() (bool, error) {
		return strings.Contains(s.amLog(), "the REST API stays up, read-only"), errors.New("not logged yet")
	})
	out, err := s.tide("stop", id)
	if code := exitCode(err); code != 1 || !strings.Contains(out, "is CANCELED") || !strings.Contains(out, id) {
		t.Errorf("tide stop of the ended job: exit %d (want 1), want its id and CANCELED in:\n%s", code, out)
	}
	if _, err := c.TriggerCheckpoint(ctx, id, api.CheckpointTriggerRequest{}); err == nil || !strings.Contains(err.Error(), "409") {
		t.Errorf("a checkpoint of the ended job: %v, want a 409", err)
	}
	op, err := c.SavepointOperation(ctx, id, trigger)
	if err != nil {
		t.Fatalf("GET the stop's result after the job ended: %v", err)
	}
	if op.Status.ID != api.OperationCompleted || op.Operation == nil || !strings.Contains(op.Operation.Location, filepath.Join(base, "savepoints")+"/savepoint-") {
		t.Fatalf("the stop's result after the job ended: %+v", op)
	}
	testkit.WaitFor(t, "the AM to exit once the result was read", func() (bool, error) {
		_, err := c.Jobs(ctx)
		var ur *api.UnreachableError
		return errors.As(err, &ur), err
	})
	if log := s.amLog(); !strings.Contains(log, "every awaited operation result has been read") {
		t.Errorf("the AM's log does not say why REST closed:\n%s", log)
	}
}
