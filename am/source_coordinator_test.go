package am

import (
	"fmt"
	"strings"
	"testing"

	"github.com/tidestream/tide/core"
	"github.com/tidestream/tide/stream"
)

// uncounted hides an enumerator's Remaining: the coordinator cannot tell how many splits
// it has left.
type uncounted struct{ stream.SplitEnumerator }

type uncountedSource struct{ stream.SplitSource }

func (s uncountedSource) CreateEnumerator(restored []byte, p int) (stream.SplitEnumerator, error) {
	e, err := s.SplitSource.CreateEnumerator(restored, p)
	return uncounted{e}, err
}

// TestSplitRequestAheadKeepsLastSplitsForIdleReaders: a request made ahead (the reader
// still has a split to read) gets nothing while the source has no more splits left than
// other readers; a request from a reader with nothing to read gets one while any is
// left. The numbers source has 4 ranges, handed out one per request. Each step is
// subtask:kind, kind i (idle) or a (ahead); want lists each answer: the number of
// splits, "-" for nothing now, "end" for no more splits.
func TestSplitRequestAheadKeepsLastSplitsForIdleReaders(t *testing.T) {
	for _, tc := range []struct {
		name        string
		parallelism int
		uncounted   bool
		steps, want string
	}{
		// The last split (one: as many as the other readers) is kept from requests made
		// ahead and goes to the reader that runs out first.
		{"p=2", 2, false, "0:i 0:a 1:i 1:a 0:a 1:i 0:a", "1 1 1 - - 1 end"},
		// A reader starting late still gets the last split, however often the first one
		// asks ahead.
		{"p=2/late reader", 2, false, "0:i 0:a 0:a 0:a 0:a 1:i 1:a", "1 1 1 - - 1 end"},
		// Four readers, four splits: one each, however early the first asks ahead.
		{"p=4", 4, false, "0:i 0:a 0:a 1:i 1:a 2:i 3:i 3:a", "1 - - 1 - 1 1 end"},
		// One reader keeps nothing back.
		{"p=1", 1, false, "0:i 0:a 0:a 0:a 0:a", "1 1 1 1 end"},
		// An enumerator that does not count its splits is always asked.
		{"p=2/uncounted", 2, true, "0:i 0:a 0:a 0:a 1:i", "1 1 1 1 end"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			sc, v, _ := newNumbersCoordinator(t, nil)
			if tc.uncounted {
				sc.sources[v] = uncountedSource{sc.sources[v]}
			}
			if err := sc.reset(1, map[core.VertexID]int{v: tc.parallelism}, nil, 0); err != nil {
				t.Fatal(err)
			}
			var got []string
			for _, step := range strings.Fields(tc.steps) {
				var index int
				var kind string
				if _, err := fmt.Sscanf(strings.Replace(step, ":", " ", 1), "%d %s", &index, &kind); err != nil {
					t.Fatalf("step %q: %v", step, err)
				}
				splits, noMore, ok, err := sc.request(1, v, index, kind == "a")
				if err != nil || !ok {
					t.Fatalf("step %s: ok %v, err %v", step, ok, err)
				}
				switch {
				case noMore:
					got = append(got, "end")
				case len(splits) == 0:
					got = append(got, "-")
				default:
					got = append(got, fmt.Sprint(len(splits)))
				}
				if w := sc.waiting[core.SubtaskID{Vertex: v, Index: index}]; w && kind == "a" {
					t.Fatalf("step %s: a request made ahead is waiting for splits; it must be answered at once", step)
				}
			}
			if g := strings.Join(got, " "); g != tc.want {
				t.Fatalf("answers %q, want %q", g, tc.want)
			}
		})
	}
}
