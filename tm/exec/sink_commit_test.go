package exec_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/tidestream/tide/core"
	"github.com/tidestream/tide/examples"
)

// TestSinkPreCommitFailureFailsTheSubtask: when the file sink cannot pre-commit its file at a
// checkpoint (here: the in-progress file vanished from the disk), its records are lost; the
// subtask must fail (and the job restore) instead of declining the checkpoint and going on
// without them.
func TestSinkPreCommitFailureFailsTheSubtask(t *testing.T) {
	out := t.TempDir()
	args := []string{"--records", "2000", "--keys", "5", "--output", out}
	job, err := examples.BuildCheckableCount(args)
	if err != nil {
		t.Fatal(err)
	}
	want, _ := examples.ExpectedOutput(args)
	am := newFakeAM(t, job, 2)
	am.checkpointing = true
	am.deploy(2)
	// The counts reach the sink at the end of input and stay in progress until a checkpoint.
	eventually(t, "the sink subtasks to reach end of input", func() bool { return writtenLines(t, out) == len(want) })
	tmps, err := filepath.Glob(filepath.Join(out, ".tide-tmp.*"))
	if err != nil || len(tmps) == 0 {
		t.Fatalf("in-progress files in %s: %v, %v", out, tmps, err)
	}
	for _, f := range tmps {
		if err := os.Remove(f); err != nil {
			t.Fatal(err)
		}
	}
	am.trigger()
	eventually(t, "a sink subtask to fail", func() bool {
		am.mu.Lock()
		defer am.mu.Unlock()
		for _, f := range am.failures {
			if strings.Contains(f, "pre-committing") && strings.Contains(f, "must fail and restore") {
				return true
			}
		}
		return false
	})
	am.mu.Lock()
	defer am.mu.Unlock()
	if am.completed != 0 {
		t.Errorf("checkpoint %d completed without the lost file", am.completed)
	}
	failed := 0
	for k, s := range am.states {
		if strings.HasPrefix(k, "count") && s == core.TaskFailed {
			failed++
		}
	}
	if failed == 0 {
		t.Errorf("no sink subtask FAILED: %v (failures %v)", am.states, am.failures)
	}
}
