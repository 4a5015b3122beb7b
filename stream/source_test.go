package stream_test

import (
	"context"
	"slices"
	"testing"

	"github.com/tidestream/tide/stream"
)

// readAll drives a reader against an enumerator, snapshotting and restoring the reader
// after every poll, and returns what was emitted.
func readAll(t *testing.T, src stream.SplitSource, parallelism int) []int64 {
	t.Helper()
	ctx := context.Background()
	enum, err := src.CreateEnumerator(nil, parallelism)
	if err != nil {
		t.Fatal(err)
	}
	var got []int64
	out := collectorFunc(func(v any, _ int64) error {
		got = append(got, v.(int64))
		return nil
	})
	var reader stream.SourceReader
	requested := false
	newReader := func(splits []stream.Split) {
		r, err := src.CreateReader(stream.ReaderContext{Subtask: 0, Parallelism: 1, RequestSplit: func() { requested = true }})
		if err != nil {
			t.Fatal(err)
		}
		r.AddSplits(splits)
		if err := r.Start(ctx); err != nil {
			t.Fatal(err)
		}
		reader = r
	}
	newReader(nil)
	for range 10000 {
		if requested {
			requested = false
			splits, noMore := enum.HandleSplitRequest(0)
			reader.AddSplits(splits)
			if noMore {
				reader.NotifyNoMoreSplits()
			}
		}
		st, err := reader.Poll(ctx, out)
		if err != nil {
			t.Fatal(err)
		}
		if st == stream.EndOfInput {
			return got
		}
		// Restart the reader from its own snapshot (what a restore does).
		splits, err := reader.SnapshotState(1)
		if err != nil {
			t.Fatal(err)
		}
		wasRequested := requested
		newReader(splits)
		requested = requested || wasRequested
	}
	t.Fatal("reader did not end")
	return nil
}

func TestNumberSequenceEmitsEachNumberOnce(t *testing.T) {
	got := readAll(t, stream.NumberSequence{From: 5, To: 2000, Splits: 7}, 1)
	slices.Sort(got)
	for i, v := range got {
		if v != int64(5+i) {
			t.Fatalf("position %d: %d, want %d (got %d numbers)", i, v, 5+i, len(got))
		}
	}
	if len(got) != 1996 {
		t.Fatalf("%d numbers, want 1996", len(got))
	}
}

func TestGeneratorIsDeterministic(t *testing.T) {
	g := stream.Generator[int64]{Partitions: 3, PerPartition: 100, Next: func(p int, seq int64, _ []byte) (int64, int64, []byte) {
		return int64(p)*1000 + seq, seq, nil
	}}
	a := readAll(t, g, 1)
	b := readAll(t, g, 1)
	slices.Sort(a)
	slices.Sort(b)
	if len(a) != 300 || !slices.Equal(a, b) {
		t.Fatalf("generator runs differ or miss records: %d vs %d", len(a), len(b))
	}
}

func TestEnumeratorStateRoundTrip(t *testing.T) {
	enum, err := stream.NumberSequence{From: 1, To: 100, Splits: 4}.CreateEnumerator(nil, 2)
	if err != nil {
		t.Fatal(err)
	}
	first, _ := enum.HandleSplitRequest(0)
	state, err := enum.SnapshotState(1)
	if err != nil {
		t.Fatal(err)
	}
	restored, err := stream.NumberSequence{From: 1, To: 100, Splits: 4}.CreateEnumerator(state, 3)
	if err != nil {
		t.Fatal(err)
	}
	restored.AddSplitsBack(first, 0)
	var ids []string
	for {
		s, noMore := restored.HandleSplitRequest(1)
		if noMore {
			break
		}
		ids = append(ids, s[0].ID)
	}
	if want := []string{"range-0", "range-1", "range-2", "range-3"}; !slices.Equal(ids, want) {
		t.Fatalf("splits %v, want %v", ids, want)
	}
}

func FuzzDecodeSplits(f *testing.F) {
	f.Add(stream.EncodeSplits([]stream.Split{{ID: "a", Data: []byte{1}}, {ID: "range-10"}}))
	f.Add([]byte{0xff, 0xff, 0x01})
	f.Fuzz(func(t *testing.T, b []byte) {
		splits, err := stream.DecodeSplits(b)
		if err != nil {
			return
		}
		again, err := stream.DecodeSplits(stream.EncodeSplits(splits))
		if err != nil || len(again) != len(splits) {
			t.Fatalf("re-encoding %d splits: %v", len(splits), err)
		}
	})
}
