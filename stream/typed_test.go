package stream_test

import (
	"context"
	"fmt"
	"log/slog"
	"slices"
	"strings"
	"testing"

	"github.com/tidestream/tide/core/jobgraph"
	"github.com/tidestream/tide/state"
	"github.com/tidestream/tide/stream"
)

// word is a WordCount-like record (a struct: boxing it as `any` allocates).
type word struct {
	W string
	N int64
}

type wordCodec struct{}

func (wordCodec) Append(dst []byte, v word) []byte {
	return stream.Int64Codec{}.Append(stream.AppendString(dst, v.W), v.N)
}

func (wordCodec) Decode(src []byte) (word, error) {
	d := stream.NewDecoder(src)
	v := word{W: d.String(), N: d.Varint()}
	return v, d.Err()
}

// routed is what a captureRouter saw of one record.
type routed struct {
	ts      int64
	payload string
	hashes  []uint64
}

// captureRouter is the runtime's end of a chain in these tests: it keeps what the chain
// routed (Route) and what reached it boxed (Collect).
type captureRouter struct {
	routed []routed
	boxed  []any
	keep   bool // false: count only (benchmarks)
	n      int
}

func (r *captureRouter) Collect(v any, ts int64) error {
	r.boxed = append(r.boxed, v)
	return nil
}

func (r *captureRouter) Route(ts int64, payload []byte, hashes []uint64) error {
	r.n++
	if r.keep {
		r.routed = append(r.routed, routed{ts, string(payload), slices.Clone(hashes)})
	}
	return nil
}

// countSink is a user-written Operator (not built by package stream): it gets its records
// through Process, boxed.
type countSink struct {
	stream.BaseOperator
	got map[string]int64
}

func (s *countSink) Process(v any, _ int64, _ stream.Collector) error {
	w := v.(word)
	s.got[w.W] = w.N
	return nil
}

// wordCountJob is lines -> tokenize (chained) -> keyBy word -> count -> sink.
func wordCountJob(tb testing.TB, sink func(stream.DataStream[word])) *stream.Job {
	job := stream.NewJob("wc", 1, 0)
	lines := stream.DirectorySource(job, "lines", stream.Directory{Dir: tb.TempDir()})
	words := stream.FlatMap(lines, "tokenize", func(line string, emit func(word)) {
		for _, w := range strings.Fields(line) {
			emit(word{W: w, N: 1})
		}
	}).WithCodec(wordCodec{})
	counts := stream.Reduce(stream.KeyBy(words, func(w word) string { return w.W }), "count",
		func(acc, v word) word { return word{W: acc.W, N: acc.N + v.N} })
	sink(counts)
	return job
}

// chainOf links the operators of vertex id the way the runtime does, ending in r.
func chainOf(tb testing.TB, job *stream.Job, id string, r stream.RecordRouter) (stream.Collector, *stream.Vertex) {
	v, err := job.Vertex(id)
	if err != nil {
		tb.Fatal(err)
	}
	ops := v.NewChain()
	next := v.OutputCollector(r)
	if s, ok := next.(stream.StagedCollector); ok {
		// The runtime's router flushes the records its chain's output holds back.
		if st, ok := r.(interface{ setStage(stream.StagedCollector) }); ok {
			st.setStage(s)
		}
	}
	for i := len(ops) - 1; i >= 0; i-- {
		rt := stream.Runtime{Vertex: id, OperatorID: ops[i].ID, Parallelism: 1, MaxParallelism: jobgraph.DefaultMaxParallelism(1),
			KeyGroupEnd: jobgraph.DefaultMaxParallelism(1) - 1, Attempt: 1, KeyedBackend: state.NewHeap(), Logger: slog.New(slog.DiscardHandler)}
		if err := ops[i].Operator.Open(context.Background(), rt, nil); err != nil {
			tb.Fatal(err)
		}
		next = stream.Link(ops[i].Operator, next)
	}
	return next, v
}

// TestTypedChainMatchesBoxed runs WordCount's two vertices through the unboxed path
// (Link, OutputCollector, RecordBatch) and checks the encoding, the key hashes and the
// counts against the boxed path (VertexOutput.Append, KeyHash, Process).
func TestTypedChainMatchesBoxed(t *testing.T) {
	sink := &countSink{got: map[string]int64{}}
	job := wordCountJob(t, func(s stream.DataStream[word]) {
		stream.Sink(s, "sink", func() stream.Operator { return sink })
	})
	var r1 captureRouter
	r1.keep = true
	head1, v1 := chainOf(t, job, "lines", &r1)
	lines := []string{"a b a", "c a b", ""}
	for i, l := range lines {
		if err := head1.Collect(l, int64(i)); err != nil {
			t.Fatal(err)
		}
	}
	if len(r1.boxed) != 0 {
		t.Fatalf("records reached the router boxed: %v", r1.boxed)
	}
	want := []word{{"a", 1}, {"b", 1}, {"a", 1}, {"c", 1}, {"a", 1}, {"b", 1}}
	if len(r1.routed) != len(want) {
		t.Fatalf("routed %d records, want %d", len(r1.routed), len(want))
	}
	out := v1.Outputs[0]
	for i, w := range want {
		got := r1.routed[i]
		if boxed := string(out.Append(nil, w)); got.payload != boxed {
			t.Errorf("record %d: typed encoding %q, boxed %q", i, got.payload, boxed)
		}
		if h := out.KeyHash(w); len(got.hashes) != 1 || got.hashes[0] != h {
			t.Errorf("record %d: typed hashes %v, boxed %d", i, got.hashes, h)
		}
	}

	var r2 captureRouter
	head2, v2 := chainOf(t, job, "count", &r2)
	batch := v2.Inputs[0].NewBatch()
	for round := range 2 { // the second round reuses the reset batch
		var idx []int
		for _, rt := range r1.routed {
			i, err := batch.Decode([]byte(rt.payload))
			if err != nil {
				t.Fatal(err)
			}
			idx = append(idx, i)
		}
		for k, i := range idx {
			if err := batch.Emit(i, r1.routed[k].ts, head2); err != nil {
				t.Fatal(err)
			}
		}
		batch.Reset()
		wantCounts := map[string]int64{"a": 3 * int64(round+1), "b": 2 * int64(round+1), "c": 1 * int64(round+1)}
		if fmt.Sprint(sink.got) != fmt.Sprint(wantCounts) {
			t.Fatalf("round %d: counts %v, want %v", round, sink.got, wantCounts)
		}
	}
	if _, err := v2.Inputs[0].NewBatch().Decode([]byte{0x80}); err == nil {
		t.Fatal("decoding a truncated record: no error")
	}
}

// BenchmarkChainWordCount is WordCount's per-record path without the network: lines of 5
// words through tokenize into the router's encoder, and each routed record decoded into a
// batch and through count into the file sink. b.N counts words; allocs/op is the
// allocations per word of the runtime and the operators.
func BenchmarkChainWordCount(b *testing.B) {
	dir := b.TempDir()
	job := wordCountJob(b, func(s stream.DataStream[word]) {
		stream.FileSink(s, "sink", dir, func(w word) string { return w.W })
	})
	var sink captureRouter
	head2, v2 := chainOf(b, job, "count", &sink)
	r := &relay{batch: v2.Inputs[0].NewBatch(), next: head2}
	head1, _ := chainOf(b, job, "lines", r)
	lines := make([]string, 64)
	for i := range lines {
		lines[i] = fmt.Sprintf("w%d w%d w%d w%d w%d", i%7, i%13, i%31, i, i%3)
	}
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i += 5 {
		if err := head1.Collect(lines[(i/5)%len(lines)], stream.NoTimestamp); err != nil {
			b.Fatal(err)
		}
	}
}

// relay decodes each routed record into a batch and emits it into the next vertex's chain
// (what the network and the task loop do between two vertices).
type relay struct {
	batch stream.RecordBatch
	next  stream.Collector
}

func (r *relay) Collect(any, int64) error {
	return fmt.Errorf("relay: a record reached the router boxed")
}

func (r *relay) Route(ts int64, payload []byte, _ []uint64) error {
	i, err := r.batch.Decode(payload)
	if err != nil {
		return err
	}
	if err := r.batch.Emit(i, ts, r.next); err != nil {
		return err
	}
	if i == 255 {
		r.batch.Reset()
	}
	return nil
}

// TestTypedCacheWithFuncCollector hands an operator that emitted into a typed link a
// Collector of a non-comparable type next: it gets the records boxed, without a panic.
func TestTypedCacheWithFuncCollector(t *testing.T) {
	job := stream.NewJob("j", 1, 0)
	n := stream.NumberSequenceSource(job, "n", stream.NumberSequence{From: 1, To: 2})
	stream.Map(stream.Map(n, "double", func(v int64) int64 { return 2 * v }), "inc", func(v int64) int64 { return v + 1 })
	v, err := job.Vertex("n")
	if err != nil {
		t.Fatal(err)
	}
	ops := v.NewChain()
	double, inc := ops[0].Operator, ops[1].Operator
	var out sliceCollector
	if err := double.Process(int64(300), 1, stream.Link(inc, &out)); err != nil {
		t.Fatal(err)
	}
	if err := double.Process(int64(400), 2, collectorFunc(func(v any, ts int64) error { return out.Collect(v, ts) })); err != nil {
		t.Fatal(err)
	}
	if want := []rec{{int64(601), 1}, {int64(800), 2}}; !slices.Equal(out.out, want) {
		t.Fatalf("got %v, want %v", out.out, want)
	}
}
