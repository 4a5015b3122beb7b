package stream_test

import (
	"context"
	"fmt"
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
