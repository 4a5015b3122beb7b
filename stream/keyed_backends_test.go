package stream_test

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/tidestream/tide/core/jobgraph"
	"github.com/tidestream/tide/stream"
)

// TestReduceAndKeyedProcessOnBothBackends runs Flink's keyed reduce and a KeyedProcess
// that drops a key's state (OnRecord returning false) and emits what is left at the end
// (OnEnd) — the operators TopSpeedWindowing, WordCount and user jobs build on — at
// parallelism 2, snapshots them, and restores them at parallelism 3 on the same and on the
// other backend: running sums continue, a dropped key starts again from zero, and only
// kept keys reach OnEnd.
func TestReduceAndKeyedProcessOnBothBackends(t *testing.T) {
	for _, phases := range [][2]string{{"hashmap", "hashmap"}, {"pebble", "pebble"}, {"hashmap", "pebble"}, {"pebble", "hashmap"}} {
		t.Run(strings.Join(phases[:], "-"), func(t *testing.T) { testReduceAndKeyedProcess(t, phases) })
	}
}

func testReduceAndKeyedProcess(t *testing.T, phases [2]string) {
	const maxP, keys = 32, 10
	newJob := func() *stream.Job {
		job := stream.NewJob("j", 1, maxP)
		nums := stream.NumberSequenceSource(job, "n", stream.NumberSequence{From: 1, To: 2})
		stream.Reduce(stream.KeyBy(nums, func(v int64) int64 { return v % keys }), "sum", func(a, b int64) int64 { return a + b })
		// gate counts a key's records, emits and forgets the key at the third.
		stream.KeyedProcess(stream.KeyBy(nums, func(v int64) int64 { return v % keys }), "gate", stream.KeyedFuncs[int64, int64, int64, string]{
			OnRecord: func(k int64, n *int64, _ int64, ts int64, emit func(string, int64)) bool {
				*n++
				if *n == 3 {
					emit(fmt.Sprintf("third:%d", k), ts)
					return false
				}
				return true
			},
			OnEnd: func(k int64, n *int64, emit func(string, int64)) {
				emit(fmt.Sprintf("end:%d:%d", k, *n), stream.NoTimestamp)
			},
		})
		return job
	}
	route := func(v int64, p int) int { return jobgraph.OperatorIndexFor(stream.KeyGroupOf(v%keys, maxP), maxP, p) }
	feed := make([]int64, 5*keys) // every key five times
	for i := range feed {
		feed[i] = int64(i)
	}
	// run feeds the operator id at parallelism p (restored from files), ends the input
	// when end, and returns its snapshots, its output and the key of each output record
	// emitted while processing a record.
	run := func(id string, p int, backend string, restored [][]byte, end bool) ([][]byte, []rec, []int64) {
		var files [][]byte
		var out sliceCollector
		var outKeys []int64
		for i := range p {
			op := vertexOps(t, newJob(), id)[0].Operator
			rt := withBackend(t, backend, runtimeFor(id, p, i, maxP))
			var r stream.StateReader
			if restored != nil {
				r = restoreFor(t, rt, restored)
			}
			open(t, op, rt, r)
			for _, v := range feed {
				if route(v, p) == i {
					if err := op.Process(v, 0, &out); err != nil {
						t.Fatal(err)
					}
					for len(outKeys) < len(out.out) {
						outKeys = append(outKeys, v%keys)
					}
				}
			}
			if end {
				if err := op.EndInput(context.Background(), &out); err != nil {
					t.Fatal(err)
				}
			}
			files = append(files, snapshotOp(t, op, rt, 1))
		}
		return files, out.out, outKeys
	}

	// Reduce: the sums go on across the restore.
	sums, _, _ := run("sum", 2, phases[0], nil, false)
	_, out, outKeys := run("sum", 3, phases[1], sums, false)
	last := map[int64]int64{}
	for i, r := range out {
		last[outKeys[i]] = r.v.(int64)
	}
	for k := range int64(keys) {
		want := int64(0)
		for v := k; v < int64(len(feed)); v += keys {
			want += 2 * v
		}
		if last[k] != want {
			t.Fatalf("reduce: key %d ends at %d after the restore, want %d", k, last[k], want)
		}
	}

	// KeyedProcess: 5 records per key before the snapshot (a third at the 3rd, then 2
	// kept), 5 after (a third at the 1st and at the 4th, then 1 kept).
	gate, out, _ := run("gate", 2, phases[0], nil, false)
	if got := values(out); len(got) != keys {
		t.Fatalf("gate before the snapshot emitted %v, want one third:k per key", got)
	}
	_, out, _ = run("gate", 3, phases[1], gate, true)
	var want []string
	for k := range keys {
		want = append(want, fmt.Sprintf("third:%d", k), fmt.Sprintf("third:%d", k), fmt.Sprintf("end:%d:1", k))
	}
	slices.Sort(want)
	if got := values(out); !slices.Equal(got, want) {
		t.Fatalf("gate after the restore emitted %v, want %v", got, want)
	}
}

func values(rs []rec) []string {
	var s []string
	for _, r := range rs {
		s = append(s, fmt.Sprint(r.v))
	}
	slices.Sort(s)
	return s
}
