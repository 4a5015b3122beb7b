package stream_test

import (
	"context"
	"os"
	"slices"
	"sort"
	"strings"
	"testing"

	"github.com/tidestream/tide/stream"
)

func fileSinkJob(dir string) *stream.Job {
	job := stream.NewJob("j", 1, 0)
	src := stream.NumberSequenceSource(job, "n", stream.NumberSequence{From: 1, To: 2})
	stream.FileSink(stream.Map(src, "s", func(v int64) string { return "x" + strings.Repeat("!", int(v)) }).WithParallelism(1), "sink", dir, func(s string) string { return s })
	return job
}

func committed(t *testing.T, dir string) []string {
	t.Helper()
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var lines []string
	for _, e := range entries {
		if strings.HasPrefix(e.Name(), ".") {
			continue
		}
		b, err := os.ReadFile(dir + "/" + e.Name())
		if err != nil {
			t.Fatal(err)
		}
		lines = append(lines, strings.Fields(string(b))...)
	}
	sort.Strings(lines)
	return lines
}

func hidden(t *testing.T, dir string) int {
	entries, _ := os.ReadDir(dir)
	n := 0
	for _, e := range entries {
		if strings.HasPrefix(e.Name(), ".") {
			n++
		}
	}
	return n
}

// TestFileSinkTwoPhase: records are visible only after their checkpoint completes; a
// restore from checkpoint 1 re-commits its pending file and discards what came after.
func TestFileSinkTwoPhase(t *testing.T) {
	dir := t.TempDir()
	ctx := context.Background()
	job := fileSinkJob(dir)
	sink := vertexOps(t, job, "n")[1].Operator // n -> s -> sink chained
	rt := runtimeFor("sink", 1, 0, 128)
	open(t, sink, rt, nil)
	write := func(op stream.Operator, s ...string) {
		for _, v := range s {
			if err := op.Process(v, 0, nil); err != nil {
				t.Fatal(err)
			}
		}
	}
	write(sink, "a", "b")
	if got := committed(t, dir); len(got) != 0 {
		t.Fatalf("visible before any checkpoint: %v", got)
	}
	chk1 := snapshotOp(t, sink, rt, 1) // pre-commit a, b
	write(sink, "c")
	_ = snapshotOp(t, sink, rt, 2) // pre-commit c; checkpoint 2 never completes
	write(sink, "d")
	if got := committed(t, dir); len(got) != 0 {
		t.Fatalf("visible before completion: %v", got)
	}
	// The job fails here (no CheckpointComplete(1) arrived) and restores from checkpoint 1.
	if err := sink.Close(); err != nil {
		t.Fatal(err)
	}
	rt2 := rt
	rt2.Attempt = 2
	sink2 := vertexOps(t, fileSinkJob(dir), "n")[1].Operator
	open(t, sink2, rt2, restoreFor(t, rt2, [][]byte{chk1}))
	if got, want := committed(t, dir), []string{"a", "b"}; !slices.Equal(got, want) {
		t.Fatalf("after restore: %v, want %v", got, want)
	}
	if n := hidden(t, dir); n != 0 {
		t.Fatalf("%d leftover in-progress files after restore, want 0", n)
	}
	// Restoring the same checkpoint again (another failure) commits nothing twice.
	rt3 := rt
	rt3.Attempt = 3
	sink3 := vertexOps(t, fileSinkJob(dir), "n")[1].Operator
	open(t, sink3, rt3, restoreFor(t, rt3, [][]byte{chk1}))
	write(sink3, "e")
	_ = snapshotOp(t, sink3, rt3, 3)
	if err := sink3.CheckpointComplete(ctx, 3); err != nil {
		t.Fatal(err)
	}
	write(sink3, "f")
	if err := sink3.EndInput(ctx, nil); err != nil {
		t.Fatal(err)
	}
	if got, want := committed(t, dir), []string{"a", "b", "e", "f"}; !slices.Equal(got, want) {
		t.Fatalf("final: %v, want %v", got, want)
	}
}

// TestFileSinkEndOfInputWaitsForFinalCheckpoint: with checkpointing the last file is not
// committed at end of input but pre-committed by the next checkpoint and committed when it
// completes; without checkpointing it is committed at end of input.
func TestFileSinkEndOfInputWaitsForFinalCheckpoint(t *testing.T) {
	ctx := context.Background()
	for _, tc := range []struct {
		name          string
		checkpointing bool
		atEnd         []string // committed right after EndInput
	}{
		{"checkpointing", true, nil},
		{"no checkpointing", false, []string{"a", "b"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			sink := vertexOps(t, fileSinkJob(dir), "n")[1].Operator
			rt := runtimeFor("sink", 1, 0, 128)
			rt.CheckpointingEnabled = tc.checkpointing
			open(t, sink, rt, nil)
			for _, v := range []string{"a", "b"} {
				if err := sink.Process(v, 0, nil); err != nil {
					t.Fatal(err)
				}
			}
			if err := sink.EndInput(ctx, nil); err != nil {
				t.Fatal(err)
			}
			if got := committed(t, dir); !slices.Equal(got, tc.atEnd) {
				t.Fatalf("after end of input: %v, want %v", got, tc.atEnd)
			}
			if !tc.checkpointing {
				return
			}
			final := snapshotOp(t, sink, rt, 7)
			if got := committed(t, dir); len(got) != 0 {
				t.Fatalf("visible before the final checkpoint completed: %v", got)
			}
			// A failure now restores from the final checkpoint: its pending file is committed.
			rt2 := rt
			rt2.Attempt = 2
			restored := vertexOps(t, fileSinkJob(dir), "n")[1].Operator
			open(t, restored, rt2, restoreFor(t, rt2, [][]byte{final}))
			if err := sink.CheckpointComplete(ctx, 7); err != nil { // the old attempt commits too: idempotent
				t.Fatal(err)
			}
			if got, want := committed(t, dir), []string{"a", "b"}; !slices.Equal(got, want) {
				t.Fatalf("after the final checkpoint: %v, want %v", got, want)
			}
			if err := sink.Close(); err != nil {
				t.Fatal(err)
			}
		})
	}
}

// TestFileSinkNamesSurviveAnAMRestart: a recovered AM counts its attempts from 1 again.
// Two AMs' first attempts (different run ids) committing into the same directory must not
// overwrite each other's files.
func TestFileSinkNamesSurviveAnAMRestart(t *testing.T) {
	dir := t.TempDir()
	ctx := context.Background()
	for i, run := range []string{"0a1b2c3d", "4e5f6a7b"} {
		rt := runtimeFor("sink", 1, 0, 128)
		rt.Attempt, rt.RunID = 1, run
		sink := vertexOps(t, fileSinkJob(dir), "n")[1].Operator
		open(t, sink, rt, nil)
		if err := sink.Process([]string{"first", "second"}[i], 0, nil); err != nil {
			t.Fatal(err)
		}
		_ = snapshotOp(t, sink, rt, int64(i+1))
		if err := sink.CheckpointComplete(ctx, int64(i+1)); err != nil {
			t.Fatal(err)
		}
		if err := sink.Close(); err != nil {
			t.Fatal(err)
		}
	}
	if got, want := committed(t, dir), []string{"first", "second"}; !slices.Equal(got, want) {
		t.Fatalf("committed %v, want %v (one AM's file overwrote the other's)", got, want)
	}
}

// TestFileSinkAppend: a sink formatting by appending writes the same lines as one formatting
// to strings, lines longer than its write buffer (64 KiB) and an empty one included.
func TestFileSinkAppend(t *testing.T) {
	ctx := context.Background()
	long := strings.Repeat("y", 200<<10)
	in := []string{"a", long, "", "b", long + "z"}
	for _, tc := range []struct {
		name string
		add  func(s stream.DataStream[string], dir string)
	}{
		{"format", func(s stream.DataStream[string], dir string) {
			stream.FileSink(s, "sink", dir, func(v string) string { return "<" + v + ">" })
		}},
		{"append", func(s stream.DataStream[string], dir string) {
			stream.FileSinkAppend(s, "sink", dir, func(dst []byte, v string) []byte { return append(append(append(dst, '<'), v...), '>') })
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			job := stream.NewJob("j", 1, 0)
			src := stream.NumberSequenceSource(job, "n", stream.NumberSequence{From: 1, To: 2})
			tc.add(stream.Map(src, "s", func(int64) string { return "" }).WithParallelism(1), dir)
			sink := vertexOps(t, job, "n")[1].Operator
			rt := runtimeFor("sink", 1, 0, 128)
			open(t, sink, rt, nil)
			for _, v := range in {
				if err := sink.Process(v, 0, nil); err != nil {
					t.Fatal(err)
				}
			}
			if err := sink.EndInput(ctx, nil); err != nil {
				t.Fatal(err)
			}
			entries, err := os.ReadDir(dir)
			if err != nil {
				t.Fatal(err)
			}
			var got string
			for _, e := range entries {
				if !strings.HasPrefix(e.Name(), ".") {
					b, err := os.ReadFile(dir + "/" + e.Name())
					if err != nil {
						t.Fatal(err)
					}
					got += string(b)
				}
			}
			want := "<a>\n<" + long + ">\n<>\n<b>\n<" + long + "z>\n"
			if got != want {
				t.Fatalf("committed %d bytes, want %d (first 20: %q)", len(got), len(want), got[:min(20, len(got))])
			}
			if err := sink.Close(); err != nil {
				t.Fatal(err)
			}
		})
	}
}
