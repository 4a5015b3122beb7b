package stream

import (
	"context"
	"log/slog"
	"testing"
	"time"

	"github.com/tidestream/tide/state"
)

// spyCollector counts the records it receives boxed (Collect) and unboxed (collectTyped).
type spyCollector[T any] struct {
	boxed, typed int
	last         T
}

func (c *spyCollector[T]) Collect(v any, _ int64) error {
	c.boxed++
	c.last = v.(T)
	return nil
}

func (c *spyCollector[T]) collectTyped(v T, _ int64) error {
	c.typed++
	c.last = v
	return nil
}

type tagKeyed struct{}

func (tagKeyed) Open(Runtime) ([]StateView, error) { return nil, nil }

func (tagKeyed) ProcessElement(key string, v int64, ts int64, emit func(string, int64)) error {
	emit(key, ts)
	return nil
}

// TestKeyedOperatorsTakeAndEmitUnboxed: ProcessKeyed's and TumblingWindow's operators link
// into a typed input (the record before them hands theirs over unboxed) and emit unboxed
// into a Collector that takes their output type, on a record or on a watermark.
func TestKeyedOperatorsTakeAndEmitUnboxed(t *testing.T) {
	job := NewJob("j", 1, 0)
	n := NumberSequenceSource(job, "n", NumberSequence{From: 1, To: 2})
	ks := KeyBy(n, func(v int64) string { return "k" })
	ProcessKeyed(ks, "process", func() KeyedProcessFunction[int64, string, string] { return tagKeyed{} })
	TumblingWindow(ks, "window", time.Second, Aggregator[int64, string, int64, string]{
		Add:    func(acc, v int64) int64 { return acc + v },
		Result: func(k string, _ int64) string { return k },
	})
	for _, id := range []string{"process", "window"} {
		t.Run(id, func(t *testing.T) {
			v, err := job.Vertex(id)
			if err != nil {
				t.Fatal(err)
			}
			op := v.NewChain()[0].Operator
			rt := Runtime{Vertex: id, OperatorID: id, Parallelism: 1, MaxParallelism: 128, KeyGroupEnd: 127, Attempt: 1,
				KeyedBackend: state.NewHeap(), Logger: slog.New(slog.DiscardHandler)}
			if err := op.Open(context.Background(), rt, nil); err != nil {
				t.Fatal(err)
			}
			out := &spyCollector[string]{}
			in, ok := Link(op, out).(typedCollector[int64])
			if !ok {
				t.Fatalf("%T does not take its input unboxed", op)
			}
			for i := range 3 {
				if err := in.collectTyped(int64(300+i), 1000+int64(i)); err != nil {
					t.Fatal(err)
				}
			}
			if err := op.Watermark(MaxWatermark-1, out); err != nil {
				t.Fatal(err)
			}
			if out.boxed != 0 || out.typed == 0 || out.last != "k" {
				t.Fatalf("%T emitted %d records boxed and %d unboxed (last %q), want all unboxed", op, out.boxed, out.typed, out.last)
			}
		})
	}
}
