package exec_test

import (
	"context"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/tidestream/tide/core"
	"github.com/tidestream/tide/examples"
	"github.com/tidestream/tide/stream"
)

// TestCheckableCountExactlyOnceAcrossRescales runs CheckableCount on two executors over
// loopback, rescales it 2 → 3 → 1 from checkpoints while it runs, and compares the committed
// output with the exact answer.
func TestCheckableCountExactlyOnceAcrossRescales(t *testing.T) {
	out := t.TempDir()
	args := []string{"--records", "20000", "--keys", "7", "--rate", "2500", "--output", out}
	job, err := examples.BuildCheckableCount(args)
	if err != nil {
		t.Fatal(err)
	}
	am := newFakeAM(t, job, 2)
	am.checkpointing = true
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go am.run(ctx, 40*time.Millisecond)

	am.deploy(2)
	am.waitFor("two checkpoints at parallelism 2", func() bool { return am.completedIn >= 2 })
	am.deploy(3)
	am.waitFor("two checkpoints at parallelism 3", func() bool { return am.completedIn >= 2 })
	am.deploy(1)
	am.waitFor("the job to finish", func() bool { return am.allInState(core.TaskFinished) })

	got, err := examples.ReadCommittedOutput(out)
	if err != nil {
		t.Fatal(err)
	}
	want, _ := examples.ExpectedOutput(args)
	if !slices.Equal(got, want) {
		t.Fatalf("output differs from the exact answer\n got: %v\nwant: %v", got, want)
	}
	am.mu.Lock()
	defer am.mu.Unlock()
	if am.attempt != 3 {
		t.Fatalf("attempt %d, want 3 (the job finished before the rescales)", am.attempt)
	}
}

// TestWordCountAcrossTwoExecutors runs WordCount over a directory on two executors.
func TestWordCountAcrossTwoExecutors(t *testing.T) {
	in, out := t.TempDir(), t.TempDir()
	writeFile(t, in, "a.txt", "the quick brown fox\njumps over the lazy dog\n")
	writeFile(t, in, "b.txt", "The dog barks\n\nthe end\n")
	job, err := examples.BuildWordCount([]string{"--input", in, "--output", out, "--parallelism", "2"})
	if err != nil {
		t.Fatal(err)
	}
	am := newFakeAM(t, job, 2)
	am.deploy(2)
	am.waitFor("the job to finish", func() bool { return am.allInState(core.TaskFinished) })
	lines, err := examples.ReadCommittedOutput(out)
	if err != nil {
		t.Fatal(err)
	}
	final := map[string]int{}
	for _, l := range lines {
		word, count, ok := cutWordCount(l)
		if !ok {
			t.Fatalf("line %q is not (word,count)", l)
		}
		final[word] = max(final[word], count)
	}
	want := map[string]int{"the": 4, "quick": 1, "brown": 1, "fox": 1, "jumps": 1, "over": 1, "lazy": 1, "dog": 2, "barks": 1, "end": 1}
	if fmt.Sprint(final) != fmt.Sprint(want) {
		t.Fatalf("final counts %v, want %v", final, want)
	}
	if len(lines) != 14 {
		t.Fatalf("%d updates, want 14 (one per word occurrence): %v", len(lines), lines)
	}
}

// TestFailingOperatorReportsFailed checks that a panic in a user function fails the
// subtask with the panic message.
func TestFailingOperatorReportsFailed(t *testing.T) {
	job := stream.NewJob("failing", 1, 0)
	nums := stream.NumberSequenceSource(job, "numbers", stream.NumberSequence{From: 1, To: 100})
	boom := stream.Map(nums, "boom", func(v int64) int64 {
		if v == 50 {
			panic("number fifty is not allowed")
		}
		return v
	})
	stream.Print(boom, "print", discard{})
	am := newFakeAM(t, job, 1)
	am.deploy(1)
	deadline := time.After(60 * time.Second)
	for {
		am.mu.Lock()
		f := slices.Clone(am.failures)
		ch := am.changed
		am.mu.Unlock()
		if len(f) > 0 {
			if !containsAll(f[0], "panic", "number fifty is not allowed") {
				t.Fatalf("failure %q does not carry the panic message", f[0])
			}
			return
		}
		select {
		case <-ch:
		case <-deadline:
			t.Fatal("timed out waiting for the failure")
		}
	}
}
