package allocator

import (
	"cmp"
	"slices"
)

// Vertex is what the allocator needs to know about one job vertex.
type Vertex struct {
	ID    string
	Group string // slot-sharing group
	Lower int    // lowest acceptable parallelism (>= 1)
	Upper int    // highest useful parallelism (>= Lower)
}

// group is one slot-sharing group with its widest bounds.
type group struct {
	name     string
	maxLower int
	maxUpper int
	slots    int // decided number of slots
}

// groups collects the slot-sharing groups in order of first appearance.
func groups(vertices []Vertex) []group {
	var gs []group
	for _, v := range vertices {
		i := slices.IndexFunc(gs, func(g group) bool { return g.name == v.Group })
		if i < 0 {
			gs = append(gs, group{name: v.Group, maxLower: v.Lower, maxUpper: v.Upper})
			continue
		}
		gs[i].maxLower = max(gs[i].maxLower, v.Lower)
		gs[i].maxUpper = max(gs[i].maxUpper, v.Upper)
	}
	return gs
}

// RequiredSlots is the number of slots that runs every vertex at its upper bound (the
// desired resources): the sum over groups of the largest upper bound.
func RequiredSlots(vertices []Vertex) int {
	n := 0
	for _, g := range groups(vertices) {
		n += g.maxUpper
	}
	return n
}

// MinimumSlots is the number of slots below which the job cannot run: the sum over groups
// of the largest lower bound.
func MinimumSlots(vertices []Vertex) int {
	n := 0
	for _, g := range groups(vertices) {
		n += g.maxLower
	}
	return n
}

// Parallelism is a decided parallelism per vertex ID.
type Parallelism map[string]int

// Equal reports whether both decide the same parallelism for every vertex.
func (p Parallelism) Equal(o Parallelism) bool {
	if len(p) != len(o) {
		return false
	}
	for k, v := range p {
		if o[k] != v {
			return false
		}
	}
	return true
}

// DetermineParallelism shares out slots between groups (narrow groups first) and gives
// each vertex min(upper, slots of its group). ok is false when slots cannot satisfy every
// lower bound.
func DetermineParallelism(vertices []Vertex, slots int) (p Parallelism, ok bool) {
	gs, ok := groupSlots(vertices, slots)
	if !ok {
		return nil, false
	}
	return vertexParallelism(vertices, gs), true
}

func groupSlots(vertices []Vertex, slots int) ([]group, bool) {
	gs := groups(vertices)
	minNeeded := 0
	for _, g := range gs {
		minNeeded += g.maxLower
	}
	if minNeeded > slots || len(gs) == 0 {
		return nil, false
	}
	order := make([]int, len(gs))
	for i := range order {
		order[i] = i
	}
	slices.SortStableFunc(order, func(a, b int) int {
		return cmp.Compare(gs[a].maxUpper-gs[a].maxLower, gs[b].maxUpper-gs[b].maxLower)
	})
	optional := slots - minNeeded // slots above every group's lower bound
	for k, i := range order {
		g := &gs[i]
		share := optional / (len(order) - k)
		extra := min(g.maxUpper-g.maxLower, share)
		g.slots = g.maxLower + extra
		optional -= extra
	}
	return gs, true
}

func vertexParallelism(vertices []Vertex, gs []group) Parallelism {
	p := make(Parallelism, len(vertices))
	for _, v := range vertices {
		for _, g := range gs {
			if g.name == v.Group {
				p[v.ID] = min(v.Upper, g.slots)
				break
			}
		}
	}
	return p
}
