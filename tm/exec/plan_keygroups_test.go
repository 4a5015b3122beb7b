package exec

import (
	"strings"
	"testing"
)

// TestKeyGroupsFromTheAM: the AM's ranges are used as sent when they cover every key
// group once with one range per subtask, and refused with a clear error otherwise; without
// them a subtask owns Flink's equal split.
func TestKeyGroupsFromTheAM(t *testing.T) {
	for _, tc := range []struct {
		name       string
		vp         VertexParallelism
		err        string
		index      int
		start, end int
	}{
		{name: "none: equal split", vp: VertexParallelism{Parallelism: 3, MaxParallelism: 128}, index: 1, start: 43, end: 85},
		{name: "sticky ranges out of order", vp: VertexParallelism{Parallelism: 3, MaxParallelism: 128,
			KeyGroupStart: []int{0, 86, 64}, KeyGroupEnd: []int{63, 127, 85}}, index: 1, start: 86, end: 127},
		{name: "starts and ends differ", vp: VertexParallelism{Parallelism: 2, MaxParallelism: 8,
			KeyGroupStart: []int{0, 4}, KeyGroupEnd: []int{3}}, err: "2 starts and 1 ends"},
		{name: "one range per subtask", vp: VertexParallelism{Parallelism: 3, MaxParallelism: 8,
			KeyGroupStart: []int{0, 4}, KeyGroupEnd: []int{3, 7}}, err: "has 2 ranges, want one per subtask (3)"},
		{name: "gap", vp: VertexParallelism{Parallelism: 2, MaxParallelism: 8,
			KeyGroupStart: []int{0, 5}, KeyGroupEnd: []int{3, 7}}, err: "subtask 1 owns 5-7, want a non-empty range starting at 4"},
		{name: "overlap", vp: VertexParallelism{Parallelism: 2, MaxParallelism: 8,
			KeyGroupStart: []int{0, 3}, KeyGroupEnd: []int{3, 7}}, err: "starting at 4"},
		{name: "short", vp: VertexParallelism{Parallelism: 2, MaxParallelism: 8,
			KeyGroupStart: []int{0, 4}, KeyGroupEnd: []int{3, 6}}, err: "covers 0-6, want 0-7"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			a, err := tc.vp.keyGroups()
			if tc.err != "" {
				if err == nil || !strings.Contains(err.Error(), tc.err) {
					t.Fatalf("error %v, want one containing %q", err, tc.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if s, e := tc.vp.keyGroupRange(tc.index); s != tc.start || e != tc.end {
				t.Fatalf("subtask %d owns %d-%d, want %d-%d", tc.index, s, e, tc.start, tc.end)
			}
			if a != nil {
				owners := a.Owners(tc.vp.MaxParallelism)
				for kg := tc.start; kg <= tc.end; kg++ {
					if owners[kg] != int32(tc.index) {
						t.Fatalf("key group %d routed to subtask %d, want %d", kg, owners[kg], tc.index)
					}
				}
			}
		})
	}
}
