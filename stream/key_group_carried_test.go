package stream_test

import (
	"context"
	"fmt"
	"math"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/tidestream/tide/stream"
)

// kgWriter records the key group of every keyed state entry a snapshot writes.
type kgWriter struct{ kgs map[string]int }

func (w *kgWriter) Keyed(_ string, kg int, key, _ []byte)         { w.kgs[string(key)] = kg }
func (w *kgWriter) List(string, stream.ListMode, stream.ListItem) {}

// TestKeyedOperatorsTakeCarriedKeyGroups: records a HASH input hands on with the key group
// their sender computed (RecordBatch.EmitRangeKeyed) are kept under that key group without
// hashing the key again when the subtask owns it; a record without one, or with one the
// subtask does not own, is hashed; with VerifyCarriedKeyGroups a carried key group the
// key does not hash to fails the operator with an error naming both.
func TestKeyedOperatorsTakeCarriedKeyGroups(t *testing.T) {
	const maxP = 256
	job := stream.NewJob("carried", 2, maxP)
	n := stream.NumberSequenceSource(job, "n", stream.NumberSequence{From: 1, To: 2})
	ks := stream.KeyBy(n, func(v int64) int64 { return v })
	stream.Reduce(ks, "reduce", func(acc, v int64) int64 { return acc + v })
	stream.TumblingWindow(ks, "window", time.Second, stream.Aggregator[int64, int64, int64, int64]{
		Add:    func(acc, v int64) int64 { return acc + v },
		Result: func(_ int64, acc int64) int64 { return acc },
	})
	// Subtask 0 of 2 owns key groups 0..127: one key it owns, and a wrong key group it owns.
	var key int64
	for key = 1; stream.KeyGroupOf(key, maxP) > 127; key++ {
	}
	right := stream.KeyGroupOf(key, maxP)
	wrong := (right + 1) % 128
	for _, id := range []string{"reduce", "window"} {
		for _, typ := range backendTypes {
			for _, tc := range []struct {
				name    string
				carried int32
				verify  bool
				empty   bool // the subtask owns no key group (KeyGroupEnd < KeyGroupStart)
				wantKG  int
				err     string
			}{
				{name: "carried", carried: int32(right), verify: true, wantKG: right},
				{name: "trusted without hashing", carried: int32(wrong), wantKG: wrong},
				{name: "none: hashed", carried: -1, verify: true, wantKG: right},
				{name: "not owned: hashed", carried: 200, verify: true, wantKG: right},
				{name: "verified", carried: int32(wrong), verify: true, err: "came with key group"},
				// Nothing owned, nothing in the snapshot: only no panic, no error.
				{name: "empty range: hashed", carried: int32(right + 1), empty: true},
				{name: "empty range, none: hashed", carried: -1, empty: true},
			} {
				t.Run(id+"/"+typ+"/"+tc.name, func(t *testing.T) {
					stream.VerifyCarriedKeyGroups(tc.verify)
					defer stream.VerifyCarriedKeyGroups(false)
					v, err := job.Vertex(id)
					if err != nil {
						t.Fatal(err)
					}
					op := v.NewChain()[0].Operator
					rt := withBackend(t, typ, runtimeFor(id, 2, 0, maxP))
					if tc.empty {
						rt.KeyGroupStart, rt.KeyGroupEnd = right+1, right
					}
					if err := op.Open(context.Background(), rt, nil); err != nil {
						t.Fatal(err)
					}
					defer op.Close()
					head := stream.Link(op, &sliceCollector{})
					batch := v.Inputs[0].NewBatch()
					i, err := batch.Decode(stream.CodecFor[int64]().Append(nil, key))
					if err != nil {
						t.Fatal(err)
					}
					err = batch.EmitRangeKeyed(i, i+1, []int64{1000}, []int32{tc.carried}, head)
					if tc.err != "" {
						if err == nil || !strings.Contains(err.Error(), tc.err) {
							t.Fatalf("error %v, want one containing %q", err, tc.err)
						}
						return
					}
					if err != nil {
						t.Fatal(err)
					}
					w := &kgWriter{kgs: map[string]int{}}
					if err := op.Snapshot(1, w); err != nil {
						t.Fatal(err)
					}
					if tc.empty {
						if len(w.kgs) != 0 {
							t.Fatalf("snapshot of a subtask without key groups holds %v", w.kgs)
						}
						return
					}
					if len(w.kgs) != 1 {
						t.Fatalf("snapshot holds %d keys, want 1: %v", len(w.kgs), w.kgs)
					}
					for _, kg := range w.kgs {
						if kg != tc.wantKG {
							t.Fatalf("key %d (hashes to key group %d, carried %d) is kept in key group %d, want %d", key, right, tc.carried, kg, tc.wantKG)
						}
					}
				})
			}
		}
	}
}

// BenchmarkReduceCarriedKeyGroup: the consumer's side of a keyed Reduce (records of 1000
// words, decoded beforehand as the input reader does, counted and encoded for the next
// edge) with the key group each record carries (carried) and hashing every key (hashed),
// in one run; ns/op is per record.
func BenchmarkReduceCarriedKeyGroup(b *testing.B) {
	const maxP = 128 // keyedChain's
	const n = 256
	kgs := make([]int32, n)
	ts := make([]int64, n)
	for _, carried := range []bool{false, true} {
		b.Run(fmt.Sprintf("carried=%v", carried), func(b *testing.B) {
			var r captureRouter
			head, _, _, v := keyedChain(b, keyedJob(keyedJobs[2].op), &r)
			batch := v.Inputs[0].NewBatch()
			for i := range n {
				w := fmt.Sprintf("w%d", (i*7)%1000)
				kgs[i] = int32(stream.KeyGroupOf(w, maxP))
				if _, err := batch.Decode(wordCodec{}.Append(nil, word{W: w, N: 1})); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportAllocs()
			b.ResetTimer()
			for done := 0; done < b.N; done += n {
				m := min(n, b.N-done)
				var err error
				if carried {
					err = batch.EmitRangeKeyed(0, m, ts, kgs, head)
				} else {
					err = batch.EmitRange(0, m, ts, head)
				}
				if err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// watermarker is an operator that takes watermarks (a window fires on them).
type watermarker interface {
	Watermark(wm int64, out stream.Collector) error
}

// TestKeyedRunsMatchOneByOne: a run of records handed to a keyed operator in one
// EmitRangeKeyed call (as the input reader does) emits what the same records handed on
// one at a time emit, in the same order; a record in the run whose carried key group is
// wrong (VerifyCarriedKeyGroups) stops the run there with an error, after the records
// before it were handled.
func TestKeyedRunsMatchOneByOne(t *testing.T) {
	const maxP = 128
	job := stream.NewJob("runs", 1, maxP)
	n := stream.NumberSequenceSource(job, "n", stream.NumberSequence{From: 1, To: 2})
	ks := stream.KeyBy(n, func(v int64) int64 { return v % 5 })
	stream.Reduce(ks, "reduce", func(acc, v int64) int64 { return acc + v })
	stream.TumblingWindow(ks, "window", time.Second, stream.Aggregator[int64, int64, int64, int64]{
		Add:    func(acc, v int64) int64 { return acc + v },
		Result: func(_ int64, acc int64) int64 { return acc },
	})
	const m = 40
	keys, ts, kgs := make([]int64, m), make([]int64, m), make([]int32, m)
	for i := range m {
		keys[i], ts[i] = int64(i+1), int64(1000+i*100) // four windows of a second
		kgs[i] = int32(stream.KeyGroupOf(keys[i]%5, maxP))
	}
	// feed hands the records to a fresh operator of vertex id, as one run or one by one,
	// and returns what it emitted (the window's results once the watermark passed them).
	feed := func(t *testing.T, id string, kgs []int32, oneByOne bool) ([]rec, error) {
		v, err := job.Vertex(id)
		if err != nil {
			t.Fatal(err)
		}
		op := v.NewChain()[0].Operator
		if err := op.Open(context.Background(), withBackend(t, "hashmap", runtimeFor(id, 1, 0, maxP)), nil); err != nil {
			t.Fatal(err)
		}
		defer op.Close()
		out := &sliceCollector{}
		head := stream.Link(op, out)
		batch := v.Inputs[0].NewBatch()
		for _, k := range keys {
			if _, err := batch.Decode(stream.CodecFor[int64]().Append(nil, k)); err != nil {
				t.Fatal(err)
			}
		}
		if oneByOne {
			for i := range m {
				if err := batch.EmitRangeKeyed(i, i+1, ts, kgs, head); err != nil {
					return out.out, err
				}
			}
		} else if err := batch.EmitRangeKeyed(0, m, ts, kgs, head); err != nil {
			return out.out, err
		}
		if err := op.EndInput(context.Background(), out); err != nil {
			return out.out, err
		}
		if w, ok := op.(watermarker); ok {
			err = w.Watermark(math.MaxInt64, out) // fires every window
		}
		return out.out, err
	}
	for _, id := range []string{"reduce", "window"} {
		t.Run(id, func(t *testing.T) {
			want, err := feed(t, id, kgs, true)
			if err != nil {
				t.Fatal(err)
			}
			got, err := feed(t, id, kgs, false)
			if err != nil {
				t.Fatal(err)
			}
			if id == "window" { // a window's keys fire in no particular order
				slices.SortFunc(got, func(a, b rec) int { return strings.Compare(fmt.Sprint(a), fmt.Sprint(b)) })
				slices.SortFunc(want, func(a, b rec) int { return strings.Compare(fmt.Sprint(a), fmt.Sprint(b)) })
			}
			if len(want) == 0 || fmt.Sprint(got) != fmt.Sprint(want) {
				t.Fatalf("one run emitted %v\nwant (one by one) %v", got, want)
			}
			if id != "reduce" {
				return
			}
			stream.VerifyCarriedKeyGroups(true)
			defer stream.VerifyCarriedKeyGroups(false)
			bad := append([]int32(nil), kgs...)
			bad[7] = (bad[7] + 1) % maxP
			got, err = feed(t, id, bad, false)
			if err == nil || !strings.Contains(err.Error(), "came with key group") {
				t.Fatalf("error %v, want one naming the carried key group", err)
			}
			if fmt.Sprint(got) != fmt.Sprint(want[:7]) {
				t.Fatalf("before the bad record the run emitted %v, want %v", got, want[:7])
			}
		})
	}
}
