// Package keygroups places a vertex's key groups on its subtasks: every subtask owns one
// contiguous range of key groups, the ranges partition [0, maxParallelism), and on a
// rescale they follow the state (seed 004, KIP-441's sticky and balanced assignment).
//
// Stickiness is counted per TaskManager: a key group moves when the TaskManager whose
// subtask owns it changes (its state then has to travel); which slot of the same
// TaskManager owns it does not matter. Balance is capacity-weighted as in KIP-441 (a
// TaskManager's capacity is its slots of the vertex): every subtask owns between
// Bounds' lo and hi key groups, so a TaskManager running k subtasks of the vertex holds at
// most k*hi <= factor * k * maxParallelism/parallelism key groups, factor times its share
// of the mean.
package keygroups

import (
	"cmp"
	"fmt"
	"slices"
)

// DefaultBalanceFactor is how far above (and below, as 1/factor) the mean a subtask's
// share of key groups may go: the seed's "0.5 ~ 2 times of the expected number".
const DefaultBalanceFactor = 2.0

// Range is the inclusive range [Start, End] of key groups a subtask owns.
type Range struct{ Start, End int }

// Len is the number of key groups in the range.
func (r Range) Len() int { return r.End - r.Start + 1 }

func (r Range) String() string { return fmt.Sprintf("%d-%d", r.Start, r.End) }

// Assignment is a vertex's key-group ranges by subtask index.
type Assignment []Range

// Default is Flink's fixed contiguous split: subtask i owns the i-th of parallelism
// near-equal ranges (what jobgraph.KeyGroupRange computes).
func Default(maxParallelism, parallelism int) Assignment {
	a := make(Assignment, parallelism)
	for i := range a {
		a[i] = Range{Start: (i*maxParallelism + parallelism - 1) / parallelism, End: ((i+1)*maxParallelism - 1) / parallelism}
	}
	return a
}

// Bounds returns the fewest and most key groups one subtask may own at parallelism with
// the balance factor: lo = min(floor(mean), ceil(mean/factor)), hi = max(ceil(mean),
// floor(mean*factor)), mean = maxParallelism/parallelism. A factor of 1 allows only the
// equal split.
func Bounds(maxParallelism, parallelism int, factor float64) (lo, hi int) {
	mean := float64(maxParallelism) / float64(parallelism)
	floor, ceil := maxParallelism/parallelism, (maxParallelism+parallelism-1)/parallelism
	lo = min(floor, max(1, ceilF(mean/factor)))
	hi = max(ceil, int(mean*factor+1e-9))
	return max(lo, 1), min(hi, maxParallelism-(parallelism-1))
}

func ceilF(x float64) int {
	n := int(x)
	if float64(n) < x-1e-9 {
		n++
	}
	return n
}

// Validate checks that a is a partition of [0, maxParallelism) into parallelism
// non-empty contiguous ranges.
func (a Assignment) Validate(maxParallelism, parallelism int) error {
	if len(a) != parallelism {
		return fmt.Errorf("key-group assignment has %d ranges, want one per subtask (%d)", len(a), parallelism)
	}
	order := make([]int, len(a))
	for i := range order {
		order[i] = i
	}
	slices.SortFunc(order, func(x, y int) int { return cmp.Compare(a[x].Start, a[y].Start) })
	next := 0
	for _, i := range order {
		if a[i].Start != next || a[i].End < a[i].Start {
			return fmt.Errorf("key-group assignment: subtask %d owns %s, want a non-empty range starting at %d (ranges must cover 0-%d exactly once)",
				i, a[i], next, maxParallelism-1)
		}
		next = a[i].End + 1
	}
	if next != maxParallelism {
		return fmt.Errorf("key-group assignment covers 0-%d, want 0-%d", next-1, maxParallelism-1)
	}
	return nil
}

// Owners returns, for every key group, the index of the subtask that owns it (routers
// use it to send a keyed record to its subtask).
func (a Assignment) Owners(maxParallelism int) []int32 {
	out := make([]int32, maxParallelism)
	for i, r := range a {
		for kg := r.Start; kg <= r.End && kg < maxParallelism; kg++ {
			out[kg] = int32(i)
		}
	}
	return out
}

// Placed is an assignment together with the TaskManager each subtask runs on.
type Placed struct {
	Ranges       Assignment
	TaskManagers []string // by subtask index
}

// byKeyGroup returns the TaskManager holding every key group ("" where none does).
func (p Placed) byKeyGroup(maxParallelism int) []string {
	out := make([]string, maxParallelism)
	for i, r := range p.Ranges {
		for kg := r.Start; kg <= r.End && kg < maxParallelism; kg++ {
			out[kg] = p.TaskManagers[i]
		}
	}
	return out
}

// Moved counts the key groups whose TaskManager differs between prev and next (all of
// them when prev is empty: a first deployment restores nothing locally).
func Moved(maxParallelism int, prev, next Placed) int {
	if len(prev.Ranges) == 0 {
		return 0
	}
	a, b := prev.byKeyGroup(maxParallelism), next.byKeyGroup(maxParallelism)
	n := 0
	for kg := range a {
		if a[kg] != b[kg] {
			n++
		}
	}
	return n
}

// LowerBound is a number of key groups every balanced assignment of maxParallelism key
// groups onto taskManagers (by subtask index) must move away from prev: a TaskManager t
// with k_t subtasks keeps at most min(had_t, k_t*hi) of what it had, and must receive
// at least k_t*lo, of which at most had_t are its own.
func LowerBound(maxParallelism int, prev Placed, taskManagers []string, factor float64) int {
	if len(prev.Ranges) == 0 {
		return 0
	}
	lo, hi := Bounds(maxParallelism, len(taskManagers), factor)
	had := map[string]int{}
	for i, r := range prev.Ranges {
		had[prev.TaskManagers[i]] += r.Len()
	}
	slots := map[string]int{}
	for _, tm := range taskManagers {
		slots[tm]++
	}
	kept, in := 0, 0
	for tm, k := range slots {
		kept += min(had[tm], k*hi)
		in += max(0, k*lo-had[tm])
	}
	return max(maxParallelism-kept, in)
}

// Slack is how many key groups more than the fewest possible Assign may move when
// placing on parallelism subtasks spread over taskManagers distinct TaskManagers with the
// balance factor: two of the largest ranges a subtask may own (Bounds' hi) per
// TaskManager. Assign cuts the key groups into contiguous ranges and settles each
// boundary between two TaskManagers locally, so what it misses compared to the best
// balanced assignment comes from the boundaries around each TaskManager's ranges, each of
// which moves at most hi key groups. The simulation tests check it against the exact
// optimum (small sizes) and against LowerBound (large sizes, where the optimum is too
// costly to find and LowerBound is below it).
func Slack(maxParallelism, parallelism, taskManagers int, factor float64) int {
	_, hi := Bounds(maxParallelism, parallelism, factor)
	return 2 * hi * taskManagers
}

// Holders returns the TaskManager holding every key group ("" where none does).
func (p Placed) Holders(maxParallelism int) []string { return p.byKeyGroup(maxParallelism) }
