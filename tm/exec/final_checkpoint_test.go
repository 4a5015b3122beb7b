package exec_test

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/tidestream/tide/core"
	"github.com/tidestream/tide/examples"
)

// eventually polls cond (for conditions outside the fake AM, such as files) until it holds;
// the deadline only guards against hangs.
func eventually(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(60 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// writtenLines counts the lines the sink wrote, committed or not.
func writtenLines(t *testing.T, dir string) int {
	t.Helper()
	return inProgressLines(t, dir) + len(committedLines(t, dir))
}

// inProgressLines counts the lines in the sink's hidden files of dir: in progress (the
// storage writer's uncommitted file) and pending (pre-committed, not yet committed).
func inProgressLines(t *testing.T, dir string) int {
	t.Helper()
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, e := range entries {
		if !strings.HasPrefix(e.Name(), ".") {
			continue
		}
		b, err := os.ReadFile(filepath.Join(dir, e.Name()))
		if err != nil {
			continue // committed (renamed) meanwhile
		}
		n += bytes.Count(b, []byte("\n"))
	}
	return n
}

func committedLines(t *testing.T, dir string) []string {
	t.Helper()
	got, err := examples.ReadCommittedOutput(dir)
	if err != nil {
		t.Fatal(err)
	}
	return got
}

func (am *fakeAM) noneInState(s core.TaskState) bool {
	for _, st := range am.states {
		if st == s {
			return false
		}
	}
	return true
}

// TestCancelAfterEndOfInputBeforeFinalCheckpoint: the sink has written its last results
// (input ended) but no checkpoint completed since; nothing may be committed and no subtask
// may finish. Killing the attempt then and restoring from the last checkpoint, taken mid-run,
// still yields the exact answer once.
func TestCancelAfterEndOfInputBeforeFinalCheckpoint(t *testing.T) {
	out := t.TempDir()
	args := []string{"--records", "4000", "--keys", "7", "--rate", "4000", "--output", out}
	job, err := examples.BuildCheckableCount(args)
	if err != nil {
		t.Fatal(err)
	}
	want, _ := examples.ExpectedOutput(args)
	am := newFakeAM(t, job, 2)
	am.checkpointing = true
	am.deploy(2)
	am.waitFor("every subtask running", func() bool { return am.allInState(core.TaskRunning) })
	am.trigger()
	am.waitFor("checkpoint 1", func() bool { return am.completed >= 1 })

	eventually(t, "the sink subtasks to reach end of input", func() bool { return writtenLines(t, out) == len(want) })
	if got := committedLines(t, out); len(got) != 0 {
		t.Fatalf("committed at end of input, before any final checkpoint: %v", got)
	}
	am.mu.Lock()
	finished := !am.noneInState(core.TaskFinished)
	am.mu.Unlock()
	if finished {
		t.Fatal("a subtask reported FINISHED without a checkpoint after its end of input")
	}

	am.deploy(2) // kill the attempt; restore from checkpoint 1
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go am.run(ctx, 30*time.Millisecond)
	am.waitFor("the restored job to finish", func() bool { return am.allInState(core.TaskFinished) })
	if got := committedLines(t, out); !slices.Equal(got, want) {
		t.Fatalf("output differs from the exact answer\n got: %v\nwant: %v", got, want)
	}
}

// TestCancelAfterFinalCheckpointBeforeFinished: the final checkpoint completed, but only one
// TaskManager heard of it (its sink subtask committed, the other did not) and nothing is
// FINISHED when the attempt is killed. Restoring from the final checkpoint at another
// parallelism must neither read the sources again nor emit the counts again: the output is
// exact, nothing doubled.
func TestCancelAfterFinalCheckpointBeforeFinished(t *testing.T) {
	out := t.TempDir()
	args := []string{"--records", "3000", "--keys", "7", "--output", out}
	job, err := examples.BuildCheckableCount(args)
	if err != nil {
		t.Fatal(err)
	}
	want, _ := examples.ExpectedOutput(args)
	am := newFakeAM(t, job, 2)
	am.checkpointing = true
	am.holdNotifications = true
	am.deploy(2)
	eventually(t, "the sink subtasks to reach end of input", func() bool { return writtenLines(t, out) == len(want) })
	am.trigger()
	am.waitFor("the final checkpoint", func() bool { return am.completed >= 1 })
	am.mu.Lock()
	final := am.completed
	am.mu.Unlock()

	am.deliverComplete(0, final) // tm-0 commits and its source finishes; tm-1 hears nothing
	am.waitFor("the source subtask on tm-0 to finish", func() bool { return am.states[key("numbers", 0)] == core.TaskFinished })
	eventually(t, "tm-0's sink subtask to commit", func() bool { return len(committedLines(t, out)) > 0 })
	partial := committedLines(t, out)
	if len(partial) >= len(want) {
		t.Fatalf("tm-1's sink committed without hearing of the checkpoint: %v", partial)
	}
	am.mu.Lock()
	sinkFinished := am.states[key("count_and_sum", 0)] == core.TaskFinished || am.states[key("count_and_sum", 1)] == core.TaskFinished
	am.mu.Unlock()
	if sinkFinished {
		t.Fatal("a sink subtask finished while a producer is still waiting for its final checkpoint")
	}

	am.deploy(3) // kill the attempt; restore from the final checkpoint at parallelism 3
	am.waitFor("the restored job to finish", func() bool { return am.allInState(core.TaskFinished) })
	if got := committedLines(t, out); !slices.Equal(got, want) {
		t.Fatalf("output differs from the exact answer\n got: %v\nwant: %v", got, want)
	}
	if n := inProgressLines(t, out); n != 0 {
		t.Fatalf("%d lines left in in-progress files", n)
	}
}

// TestSourcesReportInputEnded: each source subtask tells the AM once it has read its whole
// input and sent end of input downstream (no checkpoint after that can miss a record of
// it); the other subtasks report nothing.
func TestSourcesReportInputEnded(t *testing.T) {
	out := t.TempDir()
	job, err := examples.BuildCheckableCount([]string{"--records", "2000", "--keys", "7", "--output", out})
	if err != nil {
		t.Fatal(err)
	}
	am := newFakeAM(t, job, 2)
	am.checkpointing = true
	am.deploy(2)
	am.waitFor("both source subtasks to report the end of their input", func() bool { return len(am.inputEnded) == 2 })
	am.mu.Lock()
	got := slices.Sorted(slices.Values(am.inputEnded))
	am.mu.Unlock()
	if want := []string{key("numbers", 0), key("numbers", 1)}; !slices.Equal(got, want) {
		t.Fatalf("InputEnded from %v, want %v", got, want)
	}
	am.trigger()
	am.waitFor("the job to finish after the checkpoint triggered then", func() bool { return am.allInState(core.TaskFinished) })
}
