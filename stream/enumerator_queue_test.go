package stream_test

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/tidestream/tide/stream"
)

func numberedSplits(n int) []stream.Split {
	out := make([]stream.Split, n)
	for i := range out {
		out[i] = stream.Split{ID: fmt.Sprintf("s%d", i)}
	}
	return out
}

// TestQueueEnumeratorShares: one split per request by default; under Guided, a request
// takes a quarter of the remaining splits' share per reader, and the last ones go one at a
// time. Every split is handed out once, in ID order.
func TestQueueEnumeratorShares(t *testing.T) {
	for _, tc := range []struct {
		splits, guided int
		want           []int // sizes of the answers, in order
	}{
		{splits: 5, guided: 0, want: []int{1, 1, 1, 1, 1}},
		{splits: 4, guided: 2, want: []int{1, 1, 1, 1}},
		{splits: 20, guided: 2, want: []int{2, 2, 2, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1}}, // 20/8, 18/8, 16/8, then 14 ones
		{splits: 200, guided: 2, want: []int{25, 21, 19, 16, 14, 13, 11, 10, 8, 7, 7, 6, 5, 4, 4, 3, 3, 3, 2, 2, 2,
			1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1}}, // 36 answers instead of 200
		{splits: 3, guided: 8, want: []int{1, 1, 1}},
	} {
		t.Run(fmt.Sprintf("splits=%d/guided=%d", tc.splits, tc.guided), func(t *testing.T) {
			e, err := stream.NewQueueEnumerator(numberedSplits(tc.splits), nil)
			if err != nil {
				t.Fatal(err)
			}
			e.Guided(tc.guided)
			var sizes []int
			var got []stream.Split
			for {
				splits, noMore := e.HandleSplitRequest(0)
				if noMore {
					if len(splits) != 0 {
						t.Fatalf("no more splits, with %d splits", len(splits))
					}
					break
				}
				sizes = append(sizes, len(splits))
				got = append(got, splits...)
				if len(sizes) > tc.splits {
					t.Fatalf("more answers than splits: %v", sizes)
				}
			}
			if !slices.Equal(sizes, tc.want) {
				t.Errorf("answers of %v splits, want %v", sizes, tc.want)
			}
			if !slices.EqualFunc(got, numberedSplits(tc.splits), func(a, b stream.Split) bool { return a.ID == b.ID }) {
				t.Errorf("splits handed out %v, want each of %d once in ID order", got, tc.splits)
			}
		})
	}
}

// TestDirectoryReaderAsksAhead: a directory reader asks for its next file while it reads
// the current one, not once it is done, and asks again when it starts on the file it got.
func TestDirectoryReaderAsksAhead(t *testing.T) {
	var lines strings.Builder
	for l := range 300 { // more than one poll's 256 lines
		fmt.Fprintf(&lines, "line %d\n", l)
	}
	dir := writeFiles(t, lines.String(), lines.String(), lines.String())
	src := stream.Directory{Dir: dir}
	enum, err := src.CreateEnumerator(nil, 1)
	if err != nil {
		t.Fatal(err)
	}
	next := func() []stream.Split {
		s, noMore := enum.HandleSplitRequest(0)
		if noMore || len(s) != 1 {
			t.Fatalf("enumerator answered %d splits (no more: %v), want 1", len(s), noMore)
		}
		return s
	}
	requests := 0
	r, err := src.CreateReader(stream.ReaderContext{Parallelism: 1, RequestSplit: func() { requests++ }})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	out := &sliceCollector{}
	poll := func() {
		t.Helper()
		if _, err := r.Poll(ctx, out); err != nil {
			t.Fatal(err)
		}
	}
	if err := r.Start(ctx); err != nil {
		t.Fatal(err)
	}
	if requests != 1 {
		t.Fatalf("%d requests at start, want 1", requests)
	}
	r.AddSplits(next())
	poll() // opens part-0 and reads 256 of its lines
	if requests != 2 {
		t.Fatalf("%d requests while the first file is read, want 2 (the next file asked for ahead)", requests)
	}
	r.AddSplits(next())
	poll() // the rest of part-0
	if len(out.out) != 300 {
		t.Fatalf("%d lines read, want part-0's 300", len(out.out))
	}
	if requests != 3 {
		t.Fatalf("%d requests once part-0 was read, want 3 (the file after part-1)", requests)
	}
	held, err := r.SnapshotState(1)
	if err != nil {
		t.Fatal(err)
	}
	if len(held) != 1 {
		t.Fatalf("reader holds %d splits, want part-1 alone", len(held))
	}
}
