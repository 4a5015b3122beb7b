package stream_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/tidestream/tide/stream"
)

// answerSplitRequest hands subtask 0's reader what the enumerator gives it when the reader
// asked for a split (*requested), as the AM does.
func answerSplitRequest(enum stream.SplitEnumerator, r stream.SourceReader, requested *bool) {
	if !*requested {
		return
	}
	*requested = false
	splits, noMore := enum.HandleSplitRequest(0)
	r.AddSplits(splits)
	if noMore {
		r.NotifyNoMoreSplits()
	}
}

// readAll drives a reader against an enumerator, snapshotting and restoring the reader
// after every poll, and returns what was emitted.
func readAll[T any](t *testing.T, src stream.SplitSource, parallelism int) []T {
	t.Helper()
	ctx := context.Background()
	enum, err := src.CreateEnumerator(nil, parallelism)
	if err != nil {
		t.Fatal(err)
	}
	var got []T
	out := collectorFunc(func(v any, _ int64) error {
		got = append(got, v.(T))
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
	for range 1000000 {
		answerSplitRequest(enum, reader, &requested)
		st, err := reader.Poll(ctx, out)
		if err != nil {
			t.Fatal(err)
		}
		if st == stream.EndOfInput {
			if err := reader.Close(); err != nil {
				t.Fatal(err)
			}
			return got
		}
		// Restart the reader from its own snapshot (what a restore does).
		splits, err := reader.SnapshotState(1)
		if err != nil {
			t.Fatal(err)
		}
		if err := reader.Close(); err != nil {
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
	got := readAll[int64](t, stream.NumberSequence{From: 5, To: 2000, Splits: 7}, 1)
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
	a := readAll[int64](t, g, 1)
	b := readAll[int64](t, g, 1)
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

// TestDirectorySourceFeedsTypedAndBoxedChains: the directory source hands its lines to a
// chain of this package's operators unboxed and to any other Collector as values; both
// get every line of every file once.
func TestDirectorySourceFeedsTypedAndBoxedChains(t *testing.T) {
	dir := t.TempDir()
	var want []string
	for f := range 3 {
		var b strings.Builder
		for l := range 300 { // more than one poll's 256 lines
			line := fmt.Sprintf("file %d line %d", f, l)
			want = append(want, line)
			b.WriteString(line + "\n")
		}
		if err := os.WriteFile(filepath.Join(dir, fmt.Sprintf("part-%d.txt", f)), []byte(b.String()), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	job := stream.NewJob("lines", 1, 0)
	lines := stream.DirectorySource(job, "lines", stream.Directory{Dir: dir})
	stream.Map(lines, "upper", strings.ToUpper)
	v, err := job.Vertex("lines")
	if err != nil {
		t.Fatal(err)
	}
	ops := v.NewChain() // the source's chain: the Map, chained
	if len(ops) != 1 {
		t.Fatalf("chain of %d operators, want the Map alone", len(ops))
	}
	boxed := &sliceCollector{}
	typed := &sliceCollector{}
	if err := ops[0].Operator.Open(context.Background(), runtimeFor("upper", 1, 0, 128), nil); err != nil {
		t.Fatal(err)
	}
	head := stream.Link(ops[0].Operator, typed)
	for _, tc := range []struct {
		name string
		out  stream.Collector
		got  *sliceCollector
		want func(string) string
	}{
		{"boxed", boxed, boxed, func(s string) string { return s }},
		{"typed", head, typed, strings.ToUpper},
	} {
		t.Run(tc.name, func(t *testing.T) {
			src := stream.Directory{Dir: dir}
			enum, err := src.CreateEnumerator(nil, 1)
			if err != nil {
				t.Fatal(err)
			}
			requested := false
			r, err := src.CreateReader(stream.ReaderContext{Parallelism: 1, RequestSplit: func() { requested = true }})
			if err != nil {
				t.Fatal(err)
			}
			if err := r.Start(context.Background()); err != nil {
				t.Fatal(err)
			}
			for st := stream.MoreAvailable; st != stream.EndOfInput; {
				answerSplitRequest(enum, r, &requested)
				if st, err = r.Poll(context.Background(), tc.out); err != nil {
					t.Fatal(err)
				}
			}
			var got []string
			for _, rec := range tc.got.out {
				got = append(got, rec.v.(string))
			}
			var exp []string
			for _, w := range want {
				exp = append(exp, tc.want(w))
			}
			slices.Sort(got)
			slices.Sort(exp)
			if !slices.Equal(got, exp) {
				t.Fatalf("%d lines out, want %d: %q...", len(got), len(exp), got[:min(3, len(got))])
			}
		})
	}
}
