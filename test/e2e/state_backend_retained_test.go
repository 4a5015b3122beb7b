package e2e

import (
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/tidestream/tide/examples"
	"github.com/tidestream/tide/standalone"
)

// TestStateBackendResumeRetainedIncremental cancels a pebble job with incremental
// checkpoints and RETAIN_ON_CANCELLATION and resumes it with --fromSavepoint from its
// latest retained checkpoint in place (<checkpoints>/<job>/chk-<n>, whose tables are in
// <job>/shared/ beside it, not under chk-<n>): the new job (another job id, same
// checkpoints directory) restores it, finishes with the exact output, and leaves every
// file the retained checkpoint lists where it was.
func TestStateBackendResumeRetainedIncremental(t *testing.T) {
	out, ckpt := t.TempDir(), t.TempDir()
	args := []string{"--records", "120000", "--keys", "3000", "--dedup", "--rate", "4000", "--output", out}
	pebble := func() []string {
		return append(reactive(ckpt, "300 ms"), "state.backend.type=pebble", "execution.checkpointing.incremental=true",
			"execution.checkpointing.externalized-checkpoint-retention=RETAIN_ON_CANCELLATION",
			"state.backend.pebble.localdir="+t.TempDir())
	}
	c := startLocal(t, standalone.LocalOptions{Dynamic: pebble(), JobName: examples.CheckableCountName, JobArgs: args, TaskManagers: 2})
	id := jobID(t, c)
	d := waitRunningAt(t, c, id, 2)
	waitCheckpointIn(t, c, id, d.Attempt)
	cancelJob(t, c, id)
	from := latestRetained(t, filepath.Join(ckpt, id))
	md := readSavepointMetadata(t, from)
	var shared []string
	for _, st := range md.Subtasks {
		for _, h := range st.Handles {
			if rest, ok := strings.CutPrefix(h.Name, id+"/shared/"); ok {
				shared = append(shared, filepath.Join(ckpt, id, "shared", rest))
			}
		}
	}
	if len(shared) == 0 {
		t.Fatalf("retained checkpoint %s lists no shared tables: the job did not checkpoint incrementally", from)
	}
	if _, err := os.Stat(filepath.Join(from, "shared")); err == nil {
		t.Fatalf("retained checkpoint %s has a shared/ of its own; want its tables only beside it in %s/shared", from, id)
	}
	t.Logf("resuming from the retained checkpoint %s (%d shared tables)", from, len(shared))

	// Another rate: the job id derives from the job's name and arguments, and a job with
	// the old id would resume from its own checkpoints in the same directory instead.
	args2 := append(slices.Clone(args[:len(args)-4]), "--rate", "3000", "--output", out)
	c = startLocal(t, standalone.LocalOptions{Dynamic: pebble(), JobName: examples.CheckableCountName, JobArgs: args2,
		TaskManagers: 2, FromSavepoint: from})
	id2 := jobID(t, c)
	if id2 == id {
		t.Fatalf("the resumed job has the old job's id %s", id)
	}
	waitRunningAt(t, c, id2, 2)
	checkRestoredFrom(t, c, id2, from)
	waitExact(t, c, 4*time.Minute, out, args2)
	for _, f := range append(shared, filepath.Join(from, "_metadata")) {
		if _, err := os.Stat(f); err != nil {
			t.Errorf("the resumed job removed a file of the retained checkpoint: %v", err)
		}
	}
}

// latestRetained is the retained checkpoint with the highest id in a job's checkpoint
// directory (one with its _metadata).
func latestRetained(t *testing.T, jobDir string) string {
	t.Helper()
	dirs, _ := filepath.Glob(filepath.Join(jobDir, "chk-*"))
	best, bestN := "", int64(-1)
	for _, d := range dirs {
		n, err := strconv.ParseInt(strings.TrimPrefix(filepath.Base(d), "chk-"), 10, 64)
		if err != nil {
			continue
		}
		if _, err := os.Stat(filepath.Join(d, "_metadata")); err == nil && n > bestN {
			best, bestN = d, n
		}
	}
	if best == "" {
		t.Fatalf("no retained checkpoint with a _metadata in %s (%v)", jobDir, dirs)
	}
	return best
}
