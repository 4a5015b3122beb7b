package stream_test

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/tidestream/tide/stream"
)

// TestReadersAskAheadOnceWhenHeldBack: the directory and numbers readers ask ahead while
// they read a split; when the AM keeps the split back (an answer of no splits) they do not
// ask ahead again until that split is read, and then ask as readers with nothing to read.
// Here every request made ahead is held back, so each split costs one request of each
// kind, plus the request that hears "no more", however many polls a split takes.
func TestReadersAskAheadOnceWhenHeldBack(t *testing.T) {
	var lines strings.Builder
	for l := range 1000 {
		fmt.Fprintf(&lines, "line %d\n", l)
	}
	file := lines.String()
	for _, tc := range []struct {
		name    string
		src     stream.SplitSource
		splits  int
		records int
	}{
		{"numbers", stream.NumberSequence{From: 1, To: 5000, Splits: 5}, 5, 5000},
		{"directory", stream.Directory{Dir: writeFiles(t, file, file, file, file, file)}, 5, 5000},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ctx := context.Background()
			enum, err := tc.src.CreateEnumerator(nil, 1)
			if err != nil {
				t.Fatal(err)
			}
			var idle, ahead int
			pending := ""
			r, err := tc.src.CreateReader(stream.ReaderContext{Parallelism: 1,
				RequestSplit:      func() { idle++; pending = "idle" },
				RequestSplitAhead: func() { ahead++; pending = "ahead" },
			})
			if err != nil {
				t.Fatal(err)
			}
			if err := r.Start(ctx); err != nil {
				t.Fatal(err)
			}
			out := &sliceCollector{}
			polls := 0
			for ; polls < 100000; polls++ {
				switch pending {
				case "ahead":
					r.AddSplits(nil) // held back
				case "idle":
					splits, noMore := enum.HandleSplitRequest(0)
					if len(splits) > 0 {
						r.AddSplits(splits)
					}
					if noMore {
						r.NotifyNoMoreSplits()
					}
				}
				pending = ""
				st, err := r.Poll(ctx, out)
				if err != nil {
					t.Fatal(err)
				}
				if st == stream.EndOfInput {
					break
				}
			}
			if len(out.out) != tc.records {
				t.Fatalf("%d records read in %d polls, want %d", len(out.out), polls, tc.records)
			}
			if idle != tc.splits+1 || ahead != tc.splits {
				t.Fatalf("%d requests of a reader with nothing to read and %d made ahead in %d polls, want %d and %d",
					idle, ahead, polls, tc.splits+1, tc.splits)
			}
		})
	}
}

// TestGeneratorReadersTakeTheirShare: a generator reader asks for partitions up to its
// share (partitions/parallelism, one more for the first partitions%parallelism
// subtasks), so a reader that starts first does not take the partitions of readers
// starting after it. Each reader then reads its partitions to their
// end and hears "no more"; every record is read once.
func TestGeneratorReadersTakeTheirShare(t *testing.T) {
	for _, tc := range []struct {
		partitions, parallelism int
		want                    []int // partitions per reader
	}{
		{4, 2, []int{2, 2}},
		{5, 2, []int{3, 2}},
		{4, 3, []int{2, 1, 1}},
		{3, 4, []int{1, 1, 1, 0}},
		{128, 3, []int{43, 43, 42}},
	} {
		t.Run(fmt.Sprintf("partitions=%d/p=%d", tc.partitions, tc.parallelism), func(t *testing.T) {
			ctx := context.Background()
			g := stream.Generator[int64]{Partitions: tc.partitions, PerPartition: 10, Next: func(p int, seq int64, _ []byte) (int64, int64, []byte) {
				return int64(p)*1000 + seq, seq, nil
			}}
			enum, err := g.CreateEnumerator(nil, tc.parallelism)
			if err != nil {
				t.Fatal(err)
			}
			readers := make([]stream.SourceReader, tc.parallelism)
			asked := make([]bool, tc.parallelism)
			answer := func() {
				for i, r := range readers {
					for r != nil && asked[i] {
						asked[i] = false
						splits, noMore := enum.HandleSplitRequest(i)
						if len(splits) > 0 {
							r.AddSplits(splits)
						}
						if noMore {
							r.NotifyNoMoreSplits()
						}
					}
				}
			}
			// The first reader starts, and is answered, before the others start.
			for i := range readers {
				r, err := g.CreateReader(stream.ReaderContext{Subtask: i, Parallelism: tc.parallelism, RequestSplit: func() { asked[i] = true }})
				if err != nil {
					t.Fatal(err)
				}
				readers[i] = r
				if err := r.Start(ctx); err != nil {
					t.Fatal(err)
				}
				answer()
			}
			held := make([]int, len(readers))
			for i, r := range readers {
				splits, err := r.SnapshotState(1)
				if err != nil {
					t.Fatal(err)
				}
				held[i] = len(splits)
			}
			if !slices.Equal(held, tc.want) {
				t.Fatalf("partitions per reader %v, want %v", held, tc.want)
			}
			out := &sliceCollector{}
			ended := 0
			for range 100000 {
				ended = 0
				for _, r := range readers {
					st, err := r.Poll(ctx, out)
					if err != nil {
						t.Fatal(err)
					}
					if st == stream.EndOfInput {
						ended++
					}
				}
				answer()
				if ended == len(readers) {
					break
				}
			}
			if ended != len(readers) {
				t.Fatalf("%d of %d readers ended", ended, len(readers))
			}
			seen := map[int64]bool{}
			for _, rc := range out.out {
				if seen[rc.v.(int64)] {
					t.Fatalf("record %v read twice", rc.v)
				}
				seen[rc.v.(int64)] = true
			}
			if len(seen) != tc.partitions*10 {
				t.Fatalf("%d records read, want %d", len(seen), tc.partitions*10)
			}
		})
	}
}
