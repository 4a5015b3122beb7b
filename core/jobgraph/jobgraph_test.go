package jobgraph

import (
	"errors"
	"strings"
	"testing"
)

func TestDefaultMaxParallelism(t *testing.T) {
	for _, tc := range []struct{ p, want int }{
		{1, 128}, {2, 128}, {85, 128}, {86, 256}, {100, 256}, {171, 256}, {172, 512},
		{20000, 32768}, {32768, 32768}, {1 << 20, 32768},
	} {
		if got := DefaultMaxParallelism(tc.p); got != tc.want {
			t.Errorf("DefaultMaxParallelism(%d) = %d, want %d", tc.p, got, tc.want)
		}
	}
}

func TestBounds(t *testing.T) {
	for _, tc := range []struct {
		name         string
		v            Vertex
		reactive     bool
		lower, upper int
	}{
		{"defaults", Vertex{Parallelism: 4}, false, 1, 4},
		{"explicit", Vertex{Parallelism: 4, LowerBound: 2, UpperBound: 8}, false, 2, 8},
		{"reactive derives max", Vertex{Parallelism: 4, LowerBound: 2}, true, 1, 128},
		{"reactive user max", Vertex{Parallelism: 4, MaxParallelism: 1}, true, 1, 1},
		{"reactive user max never lowered", Vertex{Parallelism: 1000, MaxParallelism: 1000}, true, 1, 1000},
	} {
		l, u := tc.v.Bounds(tc.reactive)
		if l != tc.lower || u != tc.upper {
			t.Errorf("%s: Bounds = [%d,%d], want [%d,%d]", tc.name, l, u, tc.lower, tc.upper)
		}
	}
}

func TestValidate(t *testing.T) {
	ok := func() JobGraph {
		return JobGraph{Name: "j", Type: Streaming,
			Vertices: []Vertex{{ID: "src", Parallelism: 2}, {ID: "map", Parallelism: 2}, {ID: "sink", Parallelism: 1}},
			Edges:    []Edge{{From: "src", To: "map", Kind: Forward}, {From: "map", To: "sink", Kind: Hash}},
		}
	}
	for _, tc := range []struct {
		name   string
		mutate func(g *JobGraph)
		want   []string // substrings of the error; nil: valid
	}{
		{"valid", func(*JobGraph) {}, nil},
		{"bad type", func(g *JobGraph) { g.Type = "X" }, []string{`type "X"`}},
		{"no vertices", func(g *JobGraph) { g.Vertices, g.Edges = nil, nil }, []string{"no vertices"}},
		{"duplicate", func(g *JobGraph) { g.Vertices[1].ID = "src" }, []string{`vertex "src": duplicate id`}},
		{"parallelism", func(g *JobGraph) { g.Vertices[2].Parallelism = 0 }, []string{`vertex "sink": parallelism 0`}},
		{"max too big", func(g *JobGraph) { g.Vertices[2].MaxParallelism = 40000 }, []string{`vertex "sink": maxParallelism 40000`}},
		{"p above max", func(g *JobGraph) { g.Vertices[2].Parallelism, g.Vertices[2].MaxParallelism = 5, 4 }, []string{`vertex "sink": parallelism 5 above maxParallelism 4`}},
		{"lower above upper", func(g *JobGraph) { g.Vertices[2].LowerBound, g.Vertices[2].UpperBound = 3, 2 }, []string{`vertex "sink": lower bound 3 above upper bound 2`}},
		{"upper above max", func(g *JobGraph) { g.Vertices[2].UpperBound = 200 }, []string{`vertex "sink": upper bound 200 above maxParallelism 128`}},
		{"unknown vertex", func(g *JobGraph) { g.Edges[1].To = "nope" }, []string{`unknown target vertex "nope"`}},
		{"self loop", func(g *JobGraph) { g.Edges[1].To = "map" }, []string{`vertex "map" connects to itself`}},
		{"bad kind", func(g *JobGraph) { g.Edges[1].Kind = "BROADCAST" }, []string{`kind "BROADCAST"`}},
		{"forward parallelism", func(g *JobGraph) { g.Edges[1].Kind = Forward }, []string{`forward edge between vertex "map"`}},
		{"forward group", func(g *JobGraph) { g.Vertices[1].SlotSharingGroup = "other" }, []string{`forward edge between vertex "src"`}},
		{"cycle", func(g *JobGraph) { g.Edges = append(g.Edges, Edge{From: "sink", To: "src", Kind: Rebalance}) }, []string{"on a cycle [src map sink src]"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			g := ok()
			tc.mutate(&g)
			err := g.Validate()
			if tc.want == nil {
				if err != nil {
					t.Fatalf("Validate() = %v, want nil", err)
				}
				return
			}
			if !errors.Is(err, ErrInvalid) {
				t.Fatalf("Validate() = %v, want an error wrapping ErrInvalid", err)
			}
			for _, w := range tc.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("Validate() = %q, want it to contain %q", err, w)
				}
			}
		})
	}
}

func TestKeyGroupRangeMatchesOperatorIndex(t *testing.T) {
	for _, maxP := range []int{1, 7, 128, 1000, 32768} {
		for _, p := range []int{1, 2, 3, 5, 7, 64, 127, 128, 1000} {
			if p > maxP {
				continue
			}
			next := 0
			for i := 0; i < p; i++ {
				start, end := KeyGroupRange(maxP, p, i)
				if start != next {
					t.Fatalf("maxP=%d p=%d index=%d: start %d, want %d (ranges must tile)", maxP, p, i, start, next)
				}
				for _, kg := range []int{start, end} {
					if got := OperatorIndexFor(kg, maxP, p); got != i {
						t.Fatalf("maxP=%d p=%d: OperatorIndexFor(%d) = %d, want %d", maxP, p, kg, got, i)
					}
				}
				next = end + 1
			}
			if next != maxP {
				t.Fatalf("maxP=%d p=%d: ranges end at %d, want %d", maxP, p, next, maxP)
			}
		}
	}
}

func TestKeyGroupRangeTable(t *testing.T) {
	// Values as Flink's KeyGroupRangeAssignment computes them.
	for _, tc := range []struct{ maxP, p, i, start, end int }{
		{128, 3, 0, 0, 42}, {128, 3, 1, 43, 85}, {128, 3, 2, 86, 127},
		{10, 4, 0, 0, 2}, {10, 4, 1, 3, 4}, {10, 4, 2, 5, 7}, {10, 4, 3, 8, 9},
	} {
		s, e := KeyGroupRange(tc.maxP, tc.p, tc.i)
		if s != tc.start || e != tc.end {
			t.Errorf("KeyGroupRange(%d,%d,%d) = [%d,%d], want [%d,%d]", tc.maxP, tc.p, tc.i, s, e, tc.start, tc.end)
		}
	}
}

func TestKeyGroupForSpreads(t *testing.T) {
	const maxP, keys = 128, 128 * 200
	counts := make([]int, maxP)
	for k := 0; k < keys; k++ {
		kg := KeyGroupFor(uint64(k), maxP)
		if kg < 0 || kg >= maxP {
			t.Fatalf("KeyGroupFor(%d) = %d, out of [0,%d)", k, kg, maxP)
		}
		counts[kg]++
	}
	for kg, c := range counts {
		if c < 100 || c > 300 { // mean 200: sequential keys must not cluster
			t.Errorf("key group %d holds %d of %d sequential keys, want about %d", kg, c, keys, keys/maxP)
		}
	}
}

func FuzzKeyGroups(f *testing.F) {
	f.Add(uint64(42), 128, 3)
	f.Fuzz(func(t *testing.T, h uint64, maxP, p int) {
		if maxP <= 0 || maxP > UpperBoundMaxParallelism || p <= 0 || p > maxP {
			return
		}
		kg := KeyGroupFor(h, maxP)
		i := OperatorIndexFor(kg, maxP, p)
		s, e := KeyGroupRange(maxP, p, i)
		if kg < s || kg > e {
			t.Fatalf("key group %d routed to subtask %d whose range is [%d,%d]", kg, i, s, e)
		}
	})
}
