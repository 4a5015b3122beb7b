package keygroups

import (
	"cmp"
	"fmt"
	"slices"
)

// shiftPasses bounds the boundary-shifting passes of one round; each pass is linear in
// the number of key groups and a pass that changes nothing ends the round.
const shiftPasses = 8

// Assign places maxParallelism key groups on parallelism = len(taskManagers) subtasks
// (taskManagers[i] runs subtask i), sticking to prev where the balance factor allows.
//
// The result is a partition into contiguous ranges of between lo and hi key groups each
// (see Bounds). Without a usable prev (first deployment, other maxParallelism) it is
// Default. Otherwise it starts from the equal split, gives every range to the
// TaskManager already holding most of it (greedily, by overlap, within each TaskManager's
// number of subtasks), then moves every boundary between ranges of different
// TaskManagers to where the two keep the most of what they had, within the bounds, and
// repeats once. It is deterministic and linear in maxParallelism plus p log p.
func Assign(maxParallelism int, taskManagers []string, prev Placed, factor float64) (Assignment, error) {
	p := len(taskManagers)
	if p <= 0 || p > maxParallelism {
		return nil, fmt.Errorf("key-group assignment: parallelism %d, want 1..maxParallelism (%d)", p, maxParallelism)
	}
	if factor < 1 {
		return nil, fmt.Errorf("key-group assignment: balance factor %g, want >= 1", factor)
	}
	if len(prev.Ranges) == 0 || len(prev.TaskManagers) != len(prev.Ranges) ||
		prev.Ranges.Validate(maxParallelism, len(prev.Ranges)) != nil {
		return Default(maxParallelism, p), nil
	}
	s := newSolver(maxParallelism, taskManagers, prev, factor)
	bounds := make([]int, p+1)
	for j, r := range Default(maxParallelism, p) {
		bounds[j] = r.Start
	}
	bounds[p] = maxParallelism
	bestKept, bestBounds, bestOwner := -1, []int(nil), []int(nil)
	for range 2 {
		owner := s.match(bounds)
		s.shift(bounds, owner)
		s.slide(bounds, owner)
		if k := s.kept(bounds, owner); k > bestKept {
			bestKept, bestBounds, bestOwner = k, slices.Clone(bounds), owner
		}
	}
	return s.toAssignment(bestBounds, bestOwner), nil
}

// solver holds one Assign call's inputs in dense form: TaskManagers as small ids.
type solver struct {
	maxP   int
	lo, hi int
	tms    []string // id -> name, in order of first subtask
	slots  []int    // id -> subtasks on it
	subs   [][]int  // id -> its subtask indices, ascending
	had    []int32  // key group -> id of the TaskManager that held it, -1 if none of tms
	// starts: key group -> an old range starts there (or it is 0 or maxP). A boundary
	// there costs a restore no merge: the ranges on both sides each come from one old
	// subtask's state.
	starts []bool
}

func newSolver(maxP int, taskManagers []string, prev Placed, factor float64) *solver {
	s := &solver{maxP: maxP}
	s.lo, s.hi = Bounds(maxP, len(taskManagers), factor)
	id := map[string]int{}
	for i, tm := range taskManagers {
		k, ok := id[tm]
		if !ok {
			k = len(s.tms)
			id[tm] = k
			s.tms = append(s.tms, tm)
			s.slots = append(s.slots, 0)
			s.subs = append(s.subs, nil)
		}
		s.slots[k]++
		s.subs[k] = append(s.subs[k], i)
	}
	s.starts = make([]bool, maxP+1)
	s.starts[0], s.starts[maxP] = true, true
	for _, r := range prev.Ranges {
		if r.Start >= 0 && r.Start < maxP {
			s.starts[r.Start] = true
		}
	}
	s.had = make([]int32, maxP)
	for kg, tm := range prev.byKeyGroup(maxP) {
		s.had[kg] = -1
		if k, ok := id[tm]; ok && tm != "" {
			s.had[kg] = int32(k)
		}
	}
	return s
}

// match gives every segment [bounds[j], bounds[j+1]) a TaskManager: pairs by overlap,
// largest first, then whatever is left in segment and TaskManager order.
func (s *solver) match(bounds []int) []int {
	type pair struct{ overlap, seg, tm int }
	var pairs []pair
	count := map[int32]int{}
	for j := 0; j+1 < len(bounds); j++ {
		clear(count)
		for kg := bounds[j]; kg < bounds[j+1]; kg++ {
			if t := s.had[kg]; t >= 0 {
				count[t]++
			}
		}
		for t, n := range count {
			pairs = append(pairs, pair{n, j, int(t)})
		}
	}
	slices.SortFunc(pairs, func(a, b pair) int {
		return cmp.Or(cmp.Compare(b.overlap, a.overlap), cmp.Compare(a.seg, b.seg), cmp.Compare(a.tm, b.tm))
	})
	left := slices.Clone(s.slots)
	owner := make([]int, len(bounds)-1)
	for j := range owner {
		owner[j] = -1
	}
	for _, pr := range pairs {
		if owner[pr.seg] < 0 && left[pr.tm] > 0 {
			owner[pr.seg] = pr.tm
			left[pr.tm]--
		}
	}
	t := 0
	for j := range owner {
		if owner[j] >= 0 {
			continue
		}
		for left[t] == 0 {
			t++
		}
		owner[j] = t
		left[t]--
	}
	return owner
}

// shift moves each boundary between segments of different TaskManagers to where they keep
// the most key groups, every segment staying within [lo, hi]; ties keep the boundary.
func (s *solver) shift(bounds, owner []int) {
	for range shiftPasses {
		changed := false
		for j := 1; j+1 < len(bounds); j++ {
			a, b := int32(owner[j-1]), int32(owner[j])
			if a == b {
				continue
			}
			from := max(bounds[j-1]+s.lo, bounds[j+1]-s.hi)
			to := min(bounds[j-1]+s.hi, bounds[j+1]-s.lo)
			// gain(c) = kept by a in [bounds[j-1], c) + kept by b in [c, bounds[j+1]),
			// up to a constant: the running sum of (had==a) - (had==b) below c.
			gain := 0
			for kg := bounds[j-1]; kg < from; kg++ {
				gain += s.delta(kg, a, b)
			}
			best, bestGain := bounds[j], 0
			for kg := bounds[j-1]; kg < bounds[j]; kg++ {
				bestGain += s.delta(kg, a, b)
			}
			for c := from; c <= to; c++ {
				if gain > bestGain {
					best, bestGain = c, gain
				}
				if c < to {
					gain += s.delta(c, a, b)
				}
			}
			if best != bounds[j] {
				bounds[j] = best
				changed = true
			}
		}
		if !changed {
			return
		}
	}
}

// slide moves whole segments (both their boundaries by the same amount, the neighbours
// staying within [lo, hi]) onto old range boundaries where that keeps as many key groups:
// shift moves one boundary at a time, so a new TaskManager's segment squeezed between two
// others can stay across an old boundary (3 -> 5: 39-51 across 42|43) although 43-55 keeps
// as much. Its restore then merges two old subtasks' state, which takes time at the switch
// in proportion to the state; one old range only needs clipping.
func (s *solver) slide(bounds, owner []int) {
	aligned := func(a, b int) int { return b2i(s.starts[a]) + b2i(s.starts[b]) }
	is := func(kg, j int) int { return b2i(s.had[kg] == int32(owner[j])) }
	for j := 1; j+2 < len(bounds); j++ {
		lo, hi := bounds[j], bounds[j+1]
		bestD, bestAligned := 0, aligned(lo, hi)
		if bestAligned == 2 {
			continue
		}
		ok := func(d int) bool {
			a, b := lo+d, hi+d
			return a-bounds[j-1] >= s.lo && a-bounds[j-1] <= s.hi && bounds[j+2]-b >= s.lo && bounds[j+2]-b <= s.hi
		}
		// gain: the key groups kept after the move minus before, updated one step at a
		// time (|d| below the segment's and its neighbour's length, so the two zones that
		// change hands stay apart).
		for _, dir := range []int{1, -1} {
			gain := 0
			for step := 1; step < min(s.hi+1, hi-lo); step++ {
				if dir > 0 && hi+step > bounds[j+2] || dir < 0 && lo-step < bounds[j-1] {
					break // past the neighbour segment
				}
				if dir > 0 {
					gain += is(lo+step-1, j-1) - is(lo+step-1, j) + is(hi+step-1, j) - is(hi+step-1, j+1)
				} else {
					gain += is(lo-step, j) - is(lo-step, j-1) + is(hi-step, j+1) - is(hi-step, j)
				}
				d := dir * step
				if gain >= 0 && ok(d) {
					if n := aligned(lo+d, hi+d); n > bestAligned {
						bestD, bestAligned = d, n
					}
				}
			}
		}
		bounds[j], bounds[j+1] = lo+bestD, hi+bestD
	}
}

func b2i(b bool) int {
	if b {
		return 1
	}
	return 0
}

func (s *solver) delta(kg int, a, b int32) int {
	switch s.had[kg] {
	case a:
		return 1
	case b:
		return -1
	}
	return 0
}

// kept counts the key groups that stay on their TaskManager.
func (s *solver) kept(bounds, owner []int) int {
	n := 0
	for j, t := range owner {
		for kg := bounds[j]; kg < bounds[j+1]; kg++ {
			if s.had[kg] == int32(t) {
				n++
			}
		}
	}
	return n
}

// toAssignment hands each TaskManager's segments, in key-group order, to its subtasks in
// index order.
func (s *solver) toAssignment(bounds, owner []int) Assignment {
	out := make(Assignment, len(owner))
	next := make([]int, len(s.tms))
	for j, t := range owner {
		i := s.subs[t][next[t]]
		next[t]++
		out[i] = Range{Start: bounds[j], End: bounds[j+1] - 1}
	}
	return out
}
