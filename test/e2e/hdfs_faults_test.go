package e2e

import (
	"context"
	"fmt"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/tidestream/tide/examples"
	"github.com/tidestream/tide/internal/testkit"
	"github.com/tidestream/tide/test/hadoop/hadooptest"
)

// tolerateFailures keeps the job RUNNING through the failed checkpoints of these tests.
// Flink's default (and tide's) is 0: the first failed checkpoint fails the job over.
const tolerateFailures = "execution.checkpointing.tolerable-failed-checkpoints=1000"

// controlCtx bounds one control-channel command to the mini-cluster.
func controlCtx(t testing.TB) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	t.Cleanup(cancel)
	return ctx
}

// waitFailedCheckpoint waits until a checkpoint after `after` has failed and returns its
// id and failure message.
func (h *hdfsJob) waitFailedCheckpoint(after int64) (int64, string) {
	h.t.Helper()
	var id int64
	var msg string
	testkit.WaitFor(h.t, fmt.Sprintf("a failed checkpoint after %d", after), func() (bool, error) {
		s, err := h.checkpoints()
		if err != nil {
			return false, err
		}
		if s.Latest.Failed == nil || s.Latest.Failed.ID <= after {
			return false, fmt.Errorf("no failed checkpoint after %d: %+v", after, s.Latest.Failed)
		}
		id, msg = s.Latest.Failed.ID, s.Latest.Failed.FailureMessage
		return true, nil
	})
	return id, msg
}

// mustStillRun checks the job is RUNNING in attempt.
func (h *hdfsJob) mustStillRun(attempt int64) {
	h.t.Helper()
	d, err := h.details()
	if err != nil {
		h.t.Fatal(err)
	}
	if d.State != "RUNNING" || d.Attempt != attempt {
		h.t.Fatalf("job %s in attempt %d, want RUNNING in attempt %d (a failed checkpoint within the tolerance must not restart it)",
			d.State, d.Attempt, attempt)
	}
}

// TestHDFSNamenodeDownDuringCheckpoint stops the namenode while the job runs: the
// checkpoint fails and is reported (REST counts and latest failure, a log line naming
// the path), the job keeps RUNNING in the same attempt, the first checkpoint after the
// namenode returns completes, and the output is exact.
func TestHDFSNamenodeDownDuringCheckpoint(t *testing.T) {
	env := hadooptest.Require(t)
	env.Disrupt(t)
	out := t.TempDir()
	args := []string{"--records", "320000", "--keys", "11", "--rate", "8000", "--output", out}
	h := startHDFSJob(t, env, examples.CheckableCountName, args, 2, "300 ms", tolerateFailures)
	d := h.waitRunning(2)
	good := h.waitCompletedIn(d.Attempt)
	h.mustStillRun(d.Attempt) // running, not restoring: the namenode is not needed right now
	stopped := false
	t.Cleanup(func() {
		if stopped {
			if err := env.RestartNamenode(context.Background()); err != nil {
				t.Errorf("restoring the namenode: %v", err)
			}
		}
	})
	if err := env.StopNamenode(controlCtx(t)); err != nil {
		t.Fatal(err)
	}
	stopped = true
	failedID, msg := h.waitFailedCheckpoint(good)
	t.Logf("checkpoint %d failed with the namenode down: %s", failedID, msg)
	if !strings.Contains(msg, h.ckptURI) {
		t.Errorf("failure message %q does not name the checkpoint path under %s", msg, h.ckptURI)
	}
	s, err := h.checkpoints()
	if err != nil {
		t.Fatal(err)
	}
	if s.Counts.Failed < 1 {
		t.Errorf("REST counts.failed = %d, want ≥ 1", s.Counts.Failed)
	}
	h.mustStillRun(d.Attempt)
	if log := h.amLog(1); !strings.Contains(log, `msg="checkpoint failed"`) || !strings.Contains(log, fmt.Sprintf("path=%s/%s/chk-%d", h.ckptURI, h.id, failedID)) {
		t.Errorf("the AM's log lacks a checkpoint-failed line naming %s/%s/chk-%d", h.ckptURI, h.id, failedID)
	}

	if err := env.RestartNamenode(controlCtx(t)); err != nil {
		t.Fatal(err)
	}
	stopped = false
	next := h.waitCompleted(failedID)
	t.Logf("checkpoint %d completed after the namenode returned", next)
	h.mustStillRun(d.Attempt)
	h.finish(out)
}

// TestHDFSQuotaExceeded puts a space quota on the checkpoint directory: checkpoints fail
// with an error naming the directory, the job keeps RUNNING with the last good
// checkpoint as its restore point; once the quota is lifted checkpoints complete again
// and the output is exact.
func TestHDFSQuotaExceeded(t *testing.T) {
	env := hadooptest.Require(t)
	out := t.TempDir()
	args := []string{"--records", "240000", "--keys", "11", "--rate", "8000", "--output", out}
	h := startHDFSJob(t, env, examples.CheckableCountName, args, 2, "300 ms", tolerateFailures)
	d := h.waitRunning(2)
	h.waitCompletedIn(d.Attempt)
	h.mustStillRun(d.Attempt)
	u, err := url.Parse(h.ckptURI)
	if err != nil {
		t.Fatal(err)
	}
	dir := u.Path
	t.Cleanup(func() {
		if err := env.ClearQuota(context.Background(), dir); err != nil {
			t.Errorf("clearing the quota on %s: %v", dir, err)
		}
	})
	if err := env.SetSpaceQuota(controlCtx(t), dir, 1); err != nil {
		t.Fatal(err)
	}
	s, err := h.checkpoints()
	if err != nil {
		t.Fatal(err)
	}
	lastGood := s.Latest.Completed.ID
	// A checkpoint triggered before the quota may still complete: look past the
	// newest one that does.
	var failedID int64
	var msg string
	testkit.WaitFor(t, "a checkpoint failing on the quota", func() (bool, error) {
		s, err := h.checkpoints()
		if err != nil {
			return false, err
		}
		lastGood = s.Latest.Completed.ID
		if s.Latest.Failed == nil || s.Latest.Failed.ID <= lastGood {
			return false, fmt.Errorf("latest failed %+v, latest completed %d", s.Latest.Failed, lastGood)
		}
		failedID, msg = s.Latest.Failed.ID, s.Latest.Failed.FailureMessage
		return true, nil
	})
	t.Logf("checkpoint %d failed on the quota: %s", failedID, msg)
	if !strings.Contains(msg, "quota exceeded") || !strings.Contains(msg, "directory "+dir) {
		t.Errorf("failure message %q does not say quota exceeded on directory %s", msg, dir)
	}
	// Several more fail; the restore point stays the last good checkpoint.
	h.waitFailedCheckpoint(failedID)
	s, err = h.checkpoints()
	if err != nil {
		t.Fatal(err)
	}
	if s.Latest.Completed.ID != lastGood {
		t.Errorf("latest completed checkpoint moved from %d to %d under the quota", lastGood, s.Latest.Completed.ID)
	}
	h.mustStillRun(d.Attempt)
	if log := h.amLog(1); !strings.Contains(log, "quota exceeded on directory "+dir) {
		t.Errorf("the AM's log does not name the directory %s whose quota was exceeded", dir)
	}

	if err := env.ClearQuota(controlCtx(t), dir); err != nil {
		t.Fatal(err)
	}
	h.waitCompleted(failedID)
	h.mustStillRun(d.Attempt)
	h.finish(out)
}
