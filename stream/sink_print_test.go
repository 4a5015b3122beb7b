package stream_test

import (
	"bytes"
	"context"
	"sync"
	"testing"
	"time"

	"github.com/tidestream/tide/stream"
)

// syncBuffer is a bytes.Buffer safe for the print sink's timed flush.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// TestPrintBufferTimeout: the print sink writes every record at once with
// execution.buffer-timeout 0, on its own shortly after the record with 5 ms, and only at
// a checkpoint with -1.
func TestPrintBufferTimeout(t *testing.T) {
	tests := []struct {
		name    string
		timeout time.Duration
		alone   bool // the record is written without a checkpoint
	}{
		{"every record", 0, true},
		{"5 ms", 5 * time.Millisecond, true},
		{"only when full", -1, false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			w := &syncBuffer{}
			job := stream.NewJob("j", 1, 8)
			nums := stream.NumberSequenceSource(job, "numbers", stream.NumberSequence{From: 1, To: 10})
			stream.Print(stream.Rebalance(nums, "spread"), "print", w)
			ops := vertexOps(t, job, "spread")
			op := ops[len(ops)-1].Operator // spread -> print
			rt := runtimeFor("print", 1, 0, 8)
			rt.BufferTimeout = tc.timeout
			if err := op.Open(context.Background(), rt, nil); err != nil {
				t.Fatal(err)
			}
			defer op.Close()
			if err := op.Process(int64(7), 0, &sliceCollector{}); err != nil {
				t.Fatal(err)
			}
			const want = "1> 7\n"
			if tc.alone {
				deadline := time.Now().Add(10 * time.Second)
				for w.String() != want {
					if time.Now().After(deadline) {
						t.Fatalf("printed %q without a checkpoint, want %q", w.String(), want)
					}
					time.Sleep(time.Millisecond)
				}
				return
			}
			time.Sleep(20 * time.Millisecond)
			if got := w.String(); got != "" {
				t.Fatalf("printed %q before a checkpoint with buffer-timeout -1, want nothing", got)
			}
			if err := op.Snapshot(1, nil); err != nil {
				t.Fatal(err)
			}
			if got := w.String(); got != want {
				t.Fatalf("printed %q at the checkpoint, want %q", got, want)
			}
		})
	}
}

// TestPrintSetBufferTimeout: a print sink opened with execution.buffer-timeout -1 holds a
// record until the setting is reloaded: to 0 the held record is written at once (and the
// next with it), back to -1 a record waits again, to 5 ms it is written by the timer.
func TestPrintSetBufferTimeout(t *testing.T) {
	w := &syncBuffer{}
	job := stream.NewJob("j", 1, 8)
	nums := stream.NumberSequenceSource(job, "numbers", stream.NumberSequence{From: 1, To: 10})
	stream.Print(stream.Rebalance(nums, "spread"), "print", w)
	ops := vertexOps(t, job, "spread")
	op := ops[len(ops)-1].Operator
	setter, ok := op.(stream.BufferTimeoutSetter)
	if !ok {
		t.Fatalf("the print sink (%T) does not follow a reloaded buffer timeout", op)
	}
	rt := runtimeFor("print", 1, 0, 8)
	rt.BufferTimeout = -1
	if err := op.Open(context.Background(), rt, nil); err != nil {
		t.Fatal(err)
	}
	defer op.Close()
	process := func(v int64) {
		t.Helper()
		if err := op.Process(v, 0, &sliceCollector{}); err != nil {
			t.Fatal(err)
		}
	}
	process(1)
	time.Sleep(20 * time.Millisecond)
	if got := w.String(); got != "" {
		t.Fatalf("printed %q with buffer-timeout -1, want nothing yet", got)
	}
	if err := setter.SetBufferTimeout(0); err != nil {
		t.Fatal(err)
	}
	if got := w.String(); got != "1> 1\n" {
		t.Fatalf("after the reload to 0: printed %q, want the held record", got)
	}
	process(2)
	if got := w.String(); got != "1> 1\n1> 2\n" {
		t.Fatalf("with buffer-timeout 0: printed %q, want both records", got)
	}
	if err := setter.SetBufferTimeout(-1); err != nil {
		t.Fatal(err)
	}
	process(3)
	time.Sleep(20 * time.Millisecond)
	if got := w.String(); got != "1> 1\n1> 2\n" {
		t.Fatalf("back to -1: printed %q, want record 3 held", got)
	}
	if err := setter.SetBufferTimeout(5 * time.Millisecond); err != nil {
		t.Fatal(err)
	}
	const want = "1> 1\n1> 2\n1> 3\n"
	deadline := time.Now().Add(10 * time.Second)
	for w.String() != want {
		if time.Now().After(deadline) {
			t.Fatalf("after the reload to 5 ms: printed %q, want %q", w.String(), want)
		}
		time.Sleep(time.Millisecond)
	}
}
