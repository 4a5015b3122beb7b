package stream_test

import (
	"context"
	"fmt"
	"log/slog"
	"testing"
	"time"

	"github.com/tidestream/tide/core/jobgraph"
	"github.com/tidestream/tide/state"
	"github.com/tidestream/tide/stream"
)

// tagFn is a KeyedProcessFunction without state: it emits each word with its key.
type tagFn struct{}

func (tagFn) Open(stream.Runtime) ([]stream.StateView, error) { return nil, nil }

func (tagFn) ProcessElement(key string, v word, ts int64, emit func(word, int64)) error {
	emit(word{W: key, N: v.N}, ts)
	return nil
}

// keyedJobs are jobs whose second vertex ("op") is a keyed operator built by this package,
// fed words keyed by word and followed by a network edge (so its records leave through the
// typed encoder).
var keyedJobs = []struct {
	name string
	op   func(stream.KeyedStream[word, string]) stream.DataStream[word]
}{
	{"ProcessKeyed", func(ks stream.KeyedStream[word, string]) stream.DataStream[word] {
		return stream.ProcessKeyed(ks, "op", func() stream.KeyedProcessFunction[word, string, word] { return tagFn{} })
	}},
	{"TumblingWindow", func(ks stream.KeyedStream[word, string]) stream.DataStream[word] {
		return stream.TumblingWindow(ks, "op", time.Second, stream.Aggregator[word, string, int64, word]{
			Add:    func(acc int64, v word) int64 { return acc + v.N },
			Result: func(k string, acc int64) word { return word{W: k, N: acc} },
		})
	}},
	{"Reduce", func(ks stream.KeyedStream[word, string]) stream.DataStream[word] {
		return stream.Reduce(ks, "op", func(acc, v word) word { return word{W: acc.W, N: acc.N + v.N} })
	}},
}

func keyedJob(op func(stream.KeyedStream[word, string]) stream.DataStream[word]) *stream.Job {
	job := stream.NewJob("keyed", 1, 0)
	n := stream.NumberSequenceSource(job, "n", stream.NumberSequence{From: 1, To: 2})
	words := stream.Map(n, "word", func(v int64) word { return word{W: fmt.Sprint(v), N: 1} }).WithCodec(wordCodec{})
	out := op(stream.KeyBy(words, func(w word) string { return w.W })).WithCodec(wordCodec{})
	stream.Sink(stream.Rebalance(out, "spread"), "sink", func() stream.Operator { return &countSink{got: map[string]int64{}} })
	return job
}

// keyedChain opens the operators of vertex "op" of job as the runtime does, ending in r,
// and returns its head and its operators with the collectors they emit into.
func keyedChain(tb testing.TB, job *stream.Job, r stream.RecordRouter) (stream.Collector, []stream.ChainOperator, []stream.Collector, *stream.Vertex) {
	v, err := job.Vertex("op")
	if err != nil {
		tb.Fatal(err)
	}
	ops := v.NewChain()
	colls := make([]stream.Collector, len(ops))
	next := v.OutputCollector(r)
	for i := len(ops) - 1; i >= 0; i-- {
		colls[i] = next
		rt := stream.Runtime{Vertex: "op", OperatorID: ops[i].ID, Parallelism: 1, MaxParallelism: jobgraph.DefaultMaxParallelism(1),
			KeyGroupEnd: jobgraph.DefaultMaxParallelism(1) - 1, Attempt: 1, KeyedBackend: state.NewHeap(), Logger: slog.New(slog.DiscardHandler)}
		if err := ops[i].Operator.Open(context.Background(), rt, nil); err != nil {
			tb.Fatal(err)
		}
		next = stream.Link(ops[i].Operator, next)
	}
	return next, ops, colls, v
}

// BenchmarkChainKeyedOperators: one word per op decoded from an input batch into a keyed
// operator (ProcessKeyed, TumblingWindow with a watermark every 64 words, Reduce) and its
// output encoded for the network; allocs/op are per word.
func BenchmarkChainKeyedOperators(b *testing.B) {
	for _, kj := range keyedJobs {
		b.Run(kj.name, func(b *testing.B) {
			job := keyedJob(kj.op)
			var r captureRouter
			head, ops, colls, v := keyedChain(b, job, &r)
			batch := v.Inputs[0].NewBatch()
			payloads := make([][]byte, 64)
			for i := range payloads {
				payloads[i] = wordCodec{}.Append(nil, word{W: fmt.Sprintf("w%d", i%16), N: 1})
			}
			b.ReportAllocs()
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				j, err := batch.Decode(payloads[i%len(payloads)])
				if err != nil {
					b.Fatal(err)
				}
				ts := int64(i) * 20 // 50 words per window of 1 s
				if err := batch.Emit(j, ts, head); err != nil {
					b.Fatal(err)
				}
				if i%64 == 63 {
					batch.Reset()
					for k, op := range ops {
						if err := op.Operator.Watermark(ts, colls[k]); err != nil {
							b.Fatal(err)
						}
					}
				}
			}
		})
	}
}
