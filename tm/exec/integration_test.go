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
func TestWordCountAcrossTwoExecutors(t *testing.T) { testWordCount(t, 2) }

// TestWordCountInOneExecutor runs WordCount at parallelism 2 in one executor: every channel
// stays in one data plane, so every word crosses the keyBy unencoded in a side car (the
// bytes it sends are the records' headers only: tag and key group), and the counts are
// exact. With two executors, the words to the other one are encoded.
func TestWordCountInOneExecutor(t *testing.T) {
	testWordCount(t, 1)
	for _, c := range []struct {
		tms     int
		encoded bool
	}{{1, false}, {2, true}} {
		in := t.TempDir()
		writeFile(t, in, "a.txt", "the quick brown fox\njumps over the lazy dog\n")
		writeFile(t, in, "b.txt", "The dog barks\n\nthe end\n")
		job, err := examples.BuildWordCount([]string{"--input", in, "--output", t.TempDir(), "--parallelism", "2"})
		if err != nil {
			t.Fatal(err)
		}
		am := newFakeAM(t, job, c.tms)
		am.checkpointing = true // the subtasks stay, with their metrics, for a final checkpoint
		am.deploy(2)
		// Metrics change without the AM hearing of it: poll them.
		var out int64
		for deadline := time.Now().Add(time.Minute); ; time.Sleep(5 * time.Millisecond) {
			in := int64(0)
			out = 0
			for _, tm := range am.tms {
				for _, m := range tm.exec.Metrics() {
					switch m.Vertex {
					case "lines":
						out += m.BytesOut
					case "count":
						in += m.RecordsIn
					}
				}
			}
			if in == 14 {
				break
			}
			if time.Now().After(deadline) {
				t.Fatalf("%d executor(s): %d of 14 words counted after a minute", c.tms, in)
			}
		}
		if got := out > 2*14; got != c.encoded {
			t.Errorf("%d executor(s): the source sent %d bytes for 14 words; want 28 (two header bytes a word) only when no word is encoded", c.tms, out)
		}
	}
}

// testWordCount runs WordCount at parallelism 2 on tms executors and checks its output.
func testWordCount(t *testing.T, tms int) *fakeAM {
	in, out := t.TempDir(), t.TempDir()
	writeFile(t, in, "a.txt", "the quick brown fox\njumps over the lazy dog\n")
	writeFile(t, in, "b.txt", "The dog barks\n\nthe end\n")
	job, err := examples.BuildWordCount([]string{"--input", in, "--output", out, "--parallelism", "2"})
	if err != nil {
		t.Fatal(err)
	}
	am := newFakeAM(t, job, tms)
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
	return am
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
