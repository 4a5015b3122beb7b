package stream_test

import (
	"context"
	"fmt"
	"slices"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/tidestream/tide/core/jobgraph"
	"github.com/tidestream/tide/stream"
)

func TestChainingAndGraph(t *testing.T) {
	job := stream.NewJob("j", 2, 64)
	nums := stream.NumberSequenceSource(job, "numbers", stream.NumberSequence{From: 1, To: 10})
	m := stream.Map(nums, "double", func(v int64) int64 { return 2 * v })
	f := stream.Filter(m, "even", func(v int64) bool { return v%4 == 0 })
	r := stream.Reduce(stream.KeyBy(f, func(v int64) int64 { return v % 3 }), "sum", func(a, b int64) int64 { return a + b })
	stream.Print(r, "print", discard{})
	vs, err := job.Vertices()
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, v := range vs {
		got = append(got, v.ID+"="+v.Name)
	}
	want := []string{"numbers=numbers -> double -> even", "sum=sum -> print"}
	if !slices.Equal(got, want) {
		t.Fatalf("vertices %v, want %v", got, want)
	}
	g, err := job.Graph()
	if err != nil {
		t.Fatal(err)
	}
	if len(g.Edges) != 1 || g.Edges[0] != (jobgraph.Edge{From: "numbers", To: "sum", Kind: jobgraph.Hash}) {
		t.Fatalf("edges %v", g.Edges)
	}
	if srcs := job.Sources(); len(srcs) != 1 || srcs[0].Vertex != "numbers" {
		t.Fatalf("sources %v", srcs)
	}
}

func TestDuplicateOperatorNamesFail(t *testing.T) {
	job := stream.NewJob("j", 1, 0)
	nums := stream.NumberSequenceSource(job, "numbers", stream.NumberSequence{From: 1, To: 10})
	stream.Map(nums, "numbers", func(v int64) int64 { return v })
	if _, err := job.Graph(); err == nil {
		t.Fatal("want an error for two operators named numbers")
	}
}

func TestStatelessOperators(t *testing.T) {
	job := stream.NewJob("j", 1, 0)
	lines := stream.NumberSequenceSource(job, "n", stream.NumberSequence{From: 1, To: 2})
	words := stream.FlatMap(lines, "fm", func(v int64, emit func(string)) {
		for i := range v {
			emit(fmt.Sprintf("%d.%d", v, i))
		}
	})
	stream.Filter(words, "f", func(s string) bool { return s != "2.0" })
	ops := vertexOps(t, job, "n")
	var out sliceCollector
	fm, f := ops[0].Operator, ops[1].Operator
	chain := collectorFunc(func(v any, ts int64) error { return f.Process(v, ts, &out) })
	for _, v := range []int64{1, 2} {
		if err := fm.Process(v, 7, chain); err != nil {
			t.Fatal(err)
		}
	}
	want := []rec{{"1.0", 7}, {"2.1", 7}}
	if !slices.Equal(out.out, want) {
		t.Fatalf("got %v, want %v", out.out, want)
	}
}

type collectorFunc func(any, int64) error

func (f collectorFunc) Collect(v any, ts int64) error { return f(v, ts) }

// TestReduceRestoresAtOtherParallelism counts per key at parallelism 2, snapshots, restores
// at 3 and 1, and checks every key continues from its count.
// TestReduceRestoresAtOtherParallelism restores p=2 -> 3 -> 1 on each backend, and switches
// backend through the checkpoint format (which does not depend on the backend).
func TestReduceRestoresAtOtherParallelism(t *testing.T) {
	for _, phases := range [][3]string{{"hashmap", "hashmap", "hashmap"}, {"pebble", "pebble", "pebble"},
		{"hashmap", "pebble", "hashmap"}, {"pebble", "hashmap", "pebble"}} {
		t.Run(strings.Join(phases[:], "-"), func(t *testing.T) { testReduceRestores(t, phases) })
	}
}

func testReduceRestores(t *testing.T, phases [3]string) {
	const maxP = 32
	newJob := func() *stream.Job {
		job := stream.NewJob("j", 1, maxP)
		nums := stream.NumberSequenceSource(job, "n", stream.NumberSequence{From: 1, To: 2})
		stream.Aggregate(stream.KeyBy(nums, func(v int64) int64 { return v % 10 }), "count",
			stream.Aggregator[int64, int64, int64, [2]int64]{
				Add:    func(acc, v int64) int64 { return acc + v },
				Result: func(k, acc int64) [2]int64 { return [2]int64{k, acc} },
			}, stream.EmitEveryUpdate)
		return job
	}
	// route sends v to the subtask owning its key group at parallelism p.
	route := func(v int64, p int) int {
		return jobgraph.OperatorIndexFor(stream.KeyGroupOf(v%10, maxP), maxP, p)
	}
	files := func(p int, backend string, feed []int64, restored [][]byte) ([][]byte, map[int64]int64) {
		last := map[int64]int64{}
		var out [][]byte
		for i := range p {
			op := vertexOps(t, newJob(), "count")[0].Operator
			rt := withBackend(t, backend, runtimeFor("count", p, i, maxP))
			var r stream.StateReader
			if restored != nil {
				r = restoreFor(t, rt, restored)
			}
			open(t, op, rt, r)
			var c sliceCollector
			for _, v := range feed {
				if route(v, p) == i {
					if err := op.Process(v, 0, &c); err != nil {
						t.Fatal(err)
					}
				}
			}
			for _, r := range c.out {
				kv := r.v.([2]int64)
				last[kv[0]] = kv[1]
			}
			out = append(out, snapshotOp(t, op, rt, 1))
		}
		return out, last
	}
	ones := func(n int) []int64 {
		var s []int64
		for i := range n {
			s = append(s, int64(i))
		}
		return s
	}
	f2, _ := files(2, phases[0], ones(100), nil)
	f3, _ := files(3, phases[1], ones(100), f2)
	_, last := files(1, phases[2], ones(100), f3)
	for k := range int64(10) {
		// each key k sums k, k+10, … three times over
		want := int64(0)
		for v := k; v < 100; v += 10 {
			want += 3 * v
		}
		if last[k] != want {
			t.Fatalf("key %d: sum %d after two restores, want %d", k, last[k], want)
		}
	}
}

func TestTumblingWindow(t *testing.T) {
	for _, backend := range backendTypes {
		t.Run(backend, func(t *testing.T) { testTumblingWindow(t, backend) })
	}
}

func testTumblingWindow(t *testing.T, backend string) {
	job := stream.NewJob("j", 1, 16)
	src := stream.NumberSequenceSource(job, "n", stream.NumberSequence{From: 1, To: 2})
	stream.TumblingWindow(stream.KeyBy(src, func(v int64) int64 { return v % 2 }), "w", 10*time.Millisecond,
		stream.Aggregator[int64, int64, int64, string]{
			Add:    func(acc, v int64) int64 { return acc + v },
			Result: func(k, acc int64) string { return fmt.Sprintf("k%d=%d", k, acc) },
		})
	ops := vertexOps(t, job, "w")
	op := ops[0].Operator
	rt := withBackend(t, backend, runtimeFor("w", 1, 0, 16))
	open(t, op, rt, nil)
	var out sliceCollector
	for _, r := range []struct{ v, ts int64 }{{1, 1}, {3, 5}, {2, 9}, {5, 12}, {4, 15}} {
		if err := op.Process(r.v, r.ts, &out); err != nil {
			t.Fatal(err)
		}
	}
	if err := op.Watermark(9, &out); err != nil {
		t.Fatal(err)
	}
	got := sortedValues(out.out)
	if want := []string{"k0=2", "k1=4"}; !slices.Equal(got, want) {
		t.Fatalf("after watermark 9: %v, want %v", got, want)
	}
	// A late record for the fired window is dropped; state survives a snapshot/restore.
	if err := op.Process(int64(7), 3, &out); err != nil {
		t.Fatal(err)
	}
	file := snapshotOp(t, op, rt, 1)
	op2 := vertexOps(t, job, "w")[0].Operator
	rt2 := withBackend(t, backend, runtimeFor("w", 1, 0, 16))
	open(t, op2, rt2, restoreFor(t, rt2, [][]byte{file}))
	out.out = nil
	if err := op2.Watermark(stream.MaxWatermark, &out); err != nil {
		t.Fatal(err)
	}
	got = sortedValues(out.out)
	if want := []string{"k0=4", "k1=5"}; !slices.Equal(got, want) {
		t.Fatalf("after restore and final watermark: %v, want %v", got, want)
	}
	for _, r := range out.out {
		if r.ts != 19 {
			t.Fatalf("window result timestamp %d, want 19 (window end - 1)", r.ts)
		}
	}
	if err := op.Process(int64(1), stream.NoTimestamp, &out); err == nil {
		t.Fatal("a record without timestamp must fail a window")
	}
}

func sortedValues(rs []rec) []string {
	var s []string
	for _, r := range rs {
		s = append(s, r.v.(string))
	}
	sort.Strings(s)
	return s
}

func TestAggregateEmitAtEnd(t *testing.T) {
	for _, backend := range backendTypes {
		t.Run(backend, func(t *testing.T) { testAggregateEmitAtEnd(t, backend) })
	}
}

func testAggregateEmitAtEnd(t *testing.T, backend string) {
	job := stream.NewJob("j", 1, 16)
	src := stream.NumberSequenceSource(job, "n", stream.NumberSequence{From: 1, To: 2})
	stream.Aggregate(stream.KeyBy(src, func(v int64) string { return fmt.Sprint(v % 3) }), "agg",
		stream.Aggregator[int64, string, int64, string]{
			Add:    func(acc, v int64) int64 { return acc + 1 },
			Result: func(k string, acc int64) string { return fmt.Sprintf("%s:%d", k, acc) },
		}, stream.EmitAtEnd)
	op := vertexOps(t, job, "agg")[0].Operator
	open(t, op, withBackend(t, backend, runtimeFor("agg", 1, 0, 16)), nil)
	var out sliceCollector
	for v := range int64(10) {
		if err := op.Process(v, 0, &out); err != nil {
			t.Fatal(err)
		}
	}
	if len(out.out) != 0 {
		t.Fatalf("EmitAtEnd emitted before the end: %v", out.out)
	}
	if err := op.EndInput(context.Background(), &out); err != nil {
		t.Fatal(err)
	}
	if got, want := sortedValues(out.out), []string{"0:4", "1:3", "2:3"}; !slices.Equal(got, want) {
		t.Fatalf("got %v, want %v", got, want)
	}
}

type discard struct{}

func (discard) Write(p []byte) (int, error) { return len(p), nil }

// TestDisableChaining: with chaining off every operator is its own vertex, joined to the
// next by a forward edge (a hash edge stays hash).
func TestDisableChaining(t *testing.T) {
	job := stream.NewJob("j", 2, 64)
	nums := stream.NumberSequenceSource(job, "numbers", stream.NumberSequence{From: 1, To: 10})
	m := stream.Map(nums, "double", func(v int64) int64 { return 2 * v })
	r := stream.Reduce(stream.KeyBy(m, func(v int64) int64 { return v % 3 }), "sum", func(a, b int64) int64 { return a + b })
	stream.Print(r, "print", discard{})
	job.DisableChaining()
	g, err := job.Graph()
	if err != nil {
		t.Fatal(err)
	}
	want := []jobgraph.Edge{
		{From: "numbers", To: "double", Kind: jobgraph.Forward},
		{From: "double", To: "sum", Kind: jobgraph.Hash},
		{From: "sum", To: "print", Kind: jobgraph.Forward},
	}
	if !slices.Equal(g.Edges, want) {
		t.Fatalf("edges %v, want %v", g.Edges, want)
	}
	job.DisableChaining() // after the build: recorded as the job's error
	if _, err := job.Vertices(); err == nil || !strings.Contains(err.Error(), "after the job was built") {
		t.Fatalf("DisableChaining after the build: got %v, want an error", err)
	}
}
