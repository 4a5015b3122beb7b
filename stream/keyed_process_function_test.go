package stream_test

import (
	"fmt"
	"testing"

	"github.com/tidestream/tide/core/jobgraph"
	"github.com/tidestream/tide/stream"
)

// dedupFn drops numbers already seen for their key (MapState) and keeps the ones it let
// through in a list per key (ListState); it emits "key/v/list length" for each new number.
type dedupFn struct {
	seen *stream.MapState[int64, int64, bool]
	kept *stream.ListState[int64, int64]
}

func (d *dedupFn) Open(rt stream.Runtime) ([]stream.StateView, error) {
	var err error
	if d.seen, err = stream.NewMapState[int64, int64, bool](rt, "seen", nil, stream.TTLConfig{}); err != nil {
		return nil, err
	}
	if d.kept, err = stream.NewListState[int64, int64](rt, "kept", nil, stream.TTLConfig{}); err != nil {
		return nil, err
	}
	return []stream.StateView{d.seen, d.kept}, nil
}

func (d *dedupFn) ProcessElement(k, v int64, ts int64, emit func(string, int64)) error {
	if ok, err := d.seen.Contains(k, v); err != nil || ok {
		return err
	}
	if err := d.seen.Put(k, v, true); err != nil {
		return err
	}
	if err := d.kept.Add(k, v); err != nil {
		return err
	}
	l, err := d.kept.Get(k)
	emit(fmt.Sprintf("%d/%d/%d", k, v, len(l)), ts)
	return err
}

// TestProcessKeyedStateAcrossRescales runs a MapState/ListState operator at parallelism
// 2, then 3, then 1, each restoring the previous one's snapshots, on every combination of
// backends: duplicates of numbers seen before a rescale are dropped after it, and the
// lists hold every number once.
func TestProcessKeyedStateAcrossRescales(t *testing.T) {
	for _, phases := range [][3]string{{"hashmap", "hashmap", "hashmap"}, {"pebble", "pebble", "pebble"},
		{"hashmap", "pebble", "hashmap"}, {"pebble", "hashmap", "pebble"}} {
		t.Run(fmt.Sprint(phases), func(t *testing.T) { testProcessKeyedAcrossRescales(t, phases) })
	}
}

func testProcessKeyedAcrossRescales(t *testing.T, phases [3]string) {
	const maxP = 32
	newJob := func() *stream.Job {
		job := stream.NewJob("j", 1, maxP)
		nums := stream.NumberSequenceSource(job, "n", stream.NumberSequence{From: 1, To: 2})
		stream.ProcessKeyed(stream.KeyBy(nums, func(v int64) int64 { return v % 10 }), "dedup",
			func() stream.KeyedProcessFunction[int64, int64, string] { return &dedupFn{} })
		return job
	}
	run := func(p int, backend string, feed []int64, restored [][]byte) ([][]byte, []string) {
		var files [][]byte
		var out []string
		for i := range p {
			op := vertexOps(t, newJob(), "dedup")[0].Operator
			rt := withBackend(t, backend, runtimeFor("dedup", p, i, maxP))
			var r stream.StateReader
			if restored != nil {
				r = restoreFor(t, rt, restored)
			}
			open(t, op, rt, r)
			var c sliceCollector
			for _, v := range feed {
				if jobgraph.OperatorIndexFor(stream.KeyGroupOf(v%10, maxP), maxP, p) == i {
					if err := op.Process(v, 0, &c); err != nil {
						t.Fatal(err)
					}
				}
			}
			out = append(out, sortedValues(c.out)...)
			files = append(files, snapshotOp(t, op, rt, 1))
			if err := op.Close(); err != nil {
				t.Fatal(err)
			}
		}
		return files, out
	}
	seq := func(from, to int64) []int64 {
		var s []int64
		for v := from; v < to; v++ {
			s = append(s, v)
		}
		return s
	}
	f2, out := run(2, phases[0], seq(0, 100), nil)
	if len(out) != 100 {
		t.Fatalf("first run emitted %d, want 100", len(out))
	}
	f3, out := run(3, phases[1], seq(0, 100), f2)
	if len(out) != 0 {
		t.Fatalf("after a rescale to 3, numbers seen before came through again: %v", out)
	}
	_, out = run(1, phases[2], append(seq(100, 120), seq(0, 10)...), f3)
	if len(out) != 20 {
		t.Fatalf("after a rescale to 1: %d emitted, want the 20 new numbers: %v", len(out), out)
	}
	for _, line := range out {
		var k, v, n int64
		if _, err := fmt.Sscanf(line, "%d/%d/%d", &k, &v, &n); err != nil {
			t.Fatal(err)
		}
		if want := int64(10) + (v-100)/10 + 1; n != want {
			t.Fatalf("%s: list of key %d holds %d numbers, want %d", line, k, n, want)
		}
	}
}
