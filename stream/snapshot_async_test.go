package stream_test

import (
	"bytes"
	"fmt"
	"maps"
	"testing"
	"time"

	"github.com/tidestream/tide/stream"
	"github.com/tidestream/tide/tm/snapshot"
)

// fileEntries returns the keyed entries of operator op in a state file, by state, key
// group and key.
func fileEntries(t *testing.T, rt stream.Runtime, file []byte, states ...string) map[string]string {
	t.Helper()
	r := restoreFor(t, rt, [][]byte{file})
	got := map[string]string{}
	for _, s := range states {
		if err := r.Keyed(s, func(kg int, key, value []byte) error {
			got[fmt.Sprintf("%s/%d/%q", s, kg, key)] = string(value)
			return nil
		}); err != nil {
			t.Fatal(err)
		}
	}
	return got
}

func encodeWriter(w *snapshot.Writer, rt stream.Runtime) []byte { return w.Encode(header(rt)) }

func header(rt stream.Runtime) snapshot.Header {
	return snapshot.Header{Vertex: rt.Vertex, Subtask: rt.Subtask, Parallelism: rt.Parallelism, MaxParallelism: rt.MaxParallelism,
		KeyGroupStart: rt.KeyGroupStart, KeyGroupEnd: rt.KeyGroupEnd, Checkpoint: 1, Attempt: rt.Attempt}
}

// asyncSnapshot snapshots op into a writer that takes deferred writes, runs change (the
// subtask going on) while another goroutine streams the deferred writes into the file as
// the upload does (EncodeTo: two passes over the views, change running during both), and
// returns the file next to one written synchronously at the same barrier.
func asyncSnapshot(t *testing.T, snap func(stream.StateWriter) error, rt stream.Runtime, change func()) (async, sync []byte) {
	t.Helper()
	var sw snapshot.Writer
	if err := snap(sw.Operator(rt.OperatorID)); err != nil {
		t.Fatal(err)
	}
	var aw snapshot.Writer
	aw.AllowDeferred()
	if err := snap(aw.Operator(rt.OperatorID)); err != nil {
		t.Fatal(err)
	}
	if aw.Deferred() == 0 {
		t.Fatal("the heap state wrote its entries at the barrier instead of deferring them")
	}
	var file bytes.Buffer
	done := make(chan error)
	go func() {
		_, err := aw.EncodeTo(&file, header(rt), nil)
		done <- err
	}()
	change()
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	if aw.Deferred() != 0 {
		t.Fatalf("%d deferred writes left after EncodeTo", aw.Deferred())
	}
	aw.Release()
	return file.Bytes(), encodeWriter(&sw, rt)
}

// TestAsyncHeapSnapshotsKeepTheBarrierState takes copy-on-write snapshots of heap keyed
// state — a keyed reduce, a window operator and value, map and list views with TTL —
// lets the operator go on changing every key (and the TTL clock move past every entry's
// life) while another goroutine writes the snapshot, and checks the file holds exactly
// what a synchronous snapshot at the barrier holds (-race: nothing the upload reads is
// written).
func TestAsyncHeapSnapshotsKeepTheBarrierState(t *testing.T) {
	const maxP, keys = 16, 200
	t.Run("reduce and window", func(t *testing.T) {
		job := stream.NewJob("j", 1, maxP)
		nums := stream.NumberSequenceSource(job, "n", stream.NumberSequence{From: 1, To: 2})
		ks := stream.KeyBy(nums, func(v int64) int64 { return v % keys })
		stream.Reduce(ks, "sum", func(a, b int64) int64 { return a + b })
		stream.TumblingWindow(ks, "win", time.Second, stream.Aggregator[int64, int64, []int64, int]{
			Add:    func(acc []int64, v int64) []int64 { return append(acc, v) },
			Result: func(_ int64, acc []int64) int { return len(acc) },
		})
		for _, id := range []string{"sum", "win"} {
			t.Run(id, func(t *testing.T) {
				op := vertexOps(t, job, id)[0].Operator
				rt := withBackend(t, "hashmap", runtimeFor(id, 1, 0, maxP))
				open(t, op, rt, nil)
				var out sliceCollector
				feed := func(from, to int64) {
					for v := from; v < to; v++ {
						if err := op.Process(v, v%1000, &out); err != nil {
							t.Fatal(err)
						}
					}
				}
				feed(0, 3*keys)
				async, sync := asyncSnapshot(t, func(w stream.StateWriter) error { return op.Snapshot(1, w) }, rt, func() {
					feed(3*keys, 6*keys)
					if err := op.Watermark(5000, &out); err != nil { // fires and drops every window
						t.Fatal(err)
					}
					feed(6*keys, 7*keys)
				})
				name := map[string]string{"sum": "value", "win": "windows"}[id]
				want := fileEntries(t, rt, sync, name)
				if got := fileEntries(t, rt, async, name); len(want) != keys || !maps.Equal(got, want) {
					t.Fatalf("asynchronous snapshot: %d entries, synchronous: %d (want %d), equal=%v", len(got), len(want), keys, maps.Equal(got, want))
				}
			})
		}
	})
	t.Run("views with TTL", func(t *testing.T) {
		now := time.UnixMilli(1_000_000)
		ttl := stream.TTLConfig{TTL: 10 * time.Second, Now: func() time.Time { return now }}
		rt := withBackend(t, "hashmap", runtimeFor("op", 1, 0, maxP))
		own := runtimeFor("own", 1, 0, maxP) // no backend: the views keep private heaps
		value := stream.NewValueState[int, string](rt, "value", nil, ttl)
		list, err := stream.NewListState[int, string](rt, "list", nil, ttl)
		if err != nil {
			t.Fatal(err)
		}
		mapped, err := stream.NewMapState[int, string, int](own, "map", nil, ttl)
		if err != nil {
			t.Fatal(err)
		}
		defer mapped.Close()
		change := func(round int) {
			for k := range keys {
				if err := value.Update(k, fmt.Sprint(round)); err != nil {
					t.Fatal(err)
				}
				if err := list.Add(k, fmt.Sprint(round)); err != nil {
					t.Fatal(err)
				}
				if err := mapped.Put(k, fmt.Sprint(round%3), round); err != nil {
					t.Fatal(err)
				}
				if k%5 == 0 {
					if err := mapped.Clear(k); err != nil {
						t.Fatal(err)
					}
				}
			}
		}
		for i := range 3 {
			change(i)
			now = now.Add(4 * time.Second) // round 0's entries expire after round 2
		}
		for _, v := range []struct {
			name string
			rt   stream.Runtime
			view stream.StateView
		}{{"value", rt, value}, {"list", rt, list}, {"map", own, mapped}} {
			async, sync := asyncSnapshot(t, v.view.Snapshot, v.rt, func() {
				now = now.Add(30 * time.Second) // everything the barrier saw expires
				change(3)
				change(4)
			})
			want := fileEntries(t, v.rt, sync, v.name)
			if got := fileEntries(t, v.rt, async, v.name); len(want) == 0 || !maps.Equal(got, want) {
				t.Fatalf("%s: asynchronous snapshot has %d entries, synchronous %d, equal=%v", v.name, len(got), len(want), maps.Equal(got, want))
			}
			now = now.Add(-30 * time.Second)
		}
	})
}
