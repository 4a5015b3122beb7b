package stream_test

import (
	"bytes"
	"context"
	"fmt"
	"math"
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

type printPoint struct {
	X, Y int
}

func (p printPoint) String() string { return fmt.Sprintf("(%d,%d)", p.X, p.Y) }

// printedAs runs one record of type T through a print sink and returns what it wrote.
func printedAs[T any](t *testing.T, v T) string {
	t.Helper()
	w := &syncBuffer{}
	job := stream.NewJob("j", 1, 8)
	src := stream.GeneratorSource(job, "gen", stream.Generator[T]{Partitions: 1, Next: func(int, int64, []byte) (T, int64, []byte) {
		return v, 0, nil
	}}, stream.NoWatermarks[T]())
	stream.Print(stream.Rebalance(src, "spread"), "print", w)
	ops := vertexOps(t, job, "spread")
	op := ops[len(ops)-1].Operator
	rt := runtimeFor("print", 1, 0, 8)
	if err := op.Open(context.Background(), rt, nil); err != nil {
		t.Fatal(err)
	}
	if err := stream.Link(op, &sliceCollector{}).Collect(v, 0); err != nil {
		t.Fatal(err)
	}
	if err := op.Close(); err != nil {
		t.Fatal(err)
	}
	return w.String()
}

// TestPrintFormatsAsPercentV: the print sink writes strings and numbers without fmt, exactly
// as fmt's %v does, and everything else through fmt.
func TestPrintFormatsAsPercentV(t *testing.T) {
	check := func(got string, v any) {
		t.Helper()
		if want := fmt.Sprintf("1> %v\n", v); got != want {
			t.Errorf("printed %q for %T %v, want %q", got, v, v, want)
		}
	}
	for _, s := range []string{"", "hello", "a b\tc"} {
		check(printedAs(t, s), s)
	}
	for _, n := range []int64{0, -1, 300, math.MaxInt64, math.MinInt64} {
		check(printedAs(t, n), n)
	}
	for _, n := range []int{0, 7, -12345} {
		check(printedAs(t, n), n)
	}
	for _, f := range []float64{0, 1.5, -2.25, 1e6, 123456789, 1e21, 1e-5, 0.1 + 0.2, math.Inf(1), math.NaN()} {
		check(printedAs(t, f), f)
	}
	check(printedAs(t, printPoint{1, 2}), printPoint{1, 2})
	check(printedAs(t, struct{ A, B int }{3, 4}), struct{ A, B int }{3, 4})
}

// BenchmarkPrintSink: records (int64) handed unboxed to a print sink writing to a discarding
// writer with execution.buffer-timeout -1; allocs/op are per record.
func BenchmarkPrintSink(b *testing.B) {
	job := stream.NewJob("j", 1, 8)
	nums := stream.NumberSequenceSource(job, "numbers", stream.NumberSequence{From: 1, To: 10})
	stream.Print(stream.Rebalance(nums, "spread"), "print", discardWriter{})
	v := mustVertex(b, job, "spread")
	ops := v.NewChain()
	op := ops[len(ops)-1].Operator
	rt := runtimeFor("print", 1, 0, 8)
	rt.BufferTimeout = -1
	if err := op.Open(context.Background(), rt, nil); err != nil {
		b.Fatal(err)
	}
	defer op.Close()
	batch := v.Inputs[0].NewBatch()
	head := stream.Link(op, &sliceCollector{})
	payloads := make([][]byte, 64)
	for i := range payloads {
		payloads[i] = stream.Int64Codec{}.Append(nil, int64(1000+i))
	}
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		j, err := batch.Decode(payloads[i%len(payloads)])
		if err != nil {
			b.Fatal(err)
		}
		if err := batch.Emit(j, 0, head); err != nil {
			b.Fatal(err)
		}
		if i%64 == 63 {
			batch.Reset()
		}
	}
}

type discardWriter struct{}

func (discardWriter) Write(p []byte) (int, error) { return len(p), nil }

func mustVertex(tb testing.TB, job *stream.Job, id string) *stream.Vertex {
	tb.Helper()
	v, err := job.Vertex(id)
	if err != nil {
		tb.Fatal(err)
	}
	return v
}
