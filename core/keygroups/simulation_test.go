package keygroups

import (
	"fmt"
	"math/rand/v2"
	"testing"
)

// optimum is the fewest key groups any balanced contiguous assignment onto taskManagers
// moves away from prev, found by trying every cut and every order of the subtasks.
func optimum(maxP int, taskManagers []string, prev Placed, factor float64) int {
	p := len(taskManagers)
	lo, hi := Bounds(maxP, p, factor)
	best := maxP + 1
	perm := make([]string, p)
	used := make([]bool, p)
	sizes := make([]int, p)
	var cuts func(j, start int)
	var order func(j int)
	order = func(j int) {
		if j == p {
			next := Placed{Ranges: make(Assignment, p), TaskManagers: perm}
			s := 0
			for i := range sizes {
				next.Ranges[i] = Range{Start: s, End: s + sizes[i] - 1}
				s += sizes[i]
			}
			best = min(best, Moved(maxP, prev, next))
			return
		}
		seen := map[string]bool{}
		for i, tm := range taskManagers {
			if used[i] || seen[tm] {
				continue
			}
			seen[tm] = true
			used[i] = true
			perm[j] = tm
			order(j + 1)
			used[i] = false
		}
	}
	cuts = func(j, start int) {
		if j == p-1 {
			if n := maxP - start; n >= lo && n <= hi {
				sizes[j] = n
				order(0)
			}
			return
		}
		for n := lo; n <= hi && start+n < maxP; n++ {
			sizes[j] = n
			cuts(j+1, start+n)
		}
	}
	cuts(0, 0)
	return best
}

// check asserts validity and balance of next, and returns the key groups it moved.
func check(t *testing.T, where string, maxP int, tms []string, prev Placed, next Assignment, factor float64) int {
	t.Helper()
	p := len(tms)
	if err := next.Validate(maxP, p); err != nil {
		t.Fatalf("%s: %v", where, err)
	}
	lo, hi := Bounds(maxP, p, factor)
	held, slots := map[string]int{}, map[string]int{}
	for i, r := range next {
		if r.Len() < lo || r.Len() > hi {
			t.Fatalf("%s: subtask %d owns %d key groups, want %d..%d", where, i, r.Len(), lo, hi)
		}
		held[tms[i]] += r.Len()
		slots[tms[i]]++
	}
	mean := float64(maxP) / float64(p)
	for tm, n := range held {
		k := float64(slots[tm])
		if limit := max(factor*k*mean, k*float64((maxP+p-1)/p)); float64(n) > limit+1e-9 {
			t.Fatalf("%s: %s holds %d key groups with %d subtasks, above %g (factor %g, mean %g)", where, tm, n, slots[tm], limit, factor, mean)
		}
	}
	moved := Moved(maxP, prev, Placed{Ranges: next, TaskManagers: tms})
	if lb := LowerBound(maxP, prev, tms, factor); moved < lb {
		t.Fatalf("%s: moved %d below the lower bound %d: the bound is wrong", where, moved, lb)
	}
	return moved
}

func randomTaskManagers(r *rand.Rand, maxP int, pool []string) []string {
	p := 1 + r.IntN(min(maxP, 2*len(pool)))
	live := pool[:1+r.IntN(len(pool))]
	r.Shuffle(len(live), func(i, j int) { live[i], live[j] = live[j], live[i] })
	tms := make([]string, p)
	for i := range tms {
		tms[i] = live[r.IntN(len(live))]
	}
	return tms
}

// TestSimulationAgainstOptimum runs random rescale sequences small enough to know the
// optimum and checks moved <= optimum + Slack.
func TestSimulationAgainstOptimum(t *testing.T) {
	r := rand.New(rand.NewPCG(14, 441))
	worst := 0
	for run := range 300 {
		maxP := 1 + r.IntN(10)
		factor := []float64{1, 1.5, 2, 3}[r.IntN(4)]
		pool := []string{"tm-a", "tm-b", "tm-c", "tm-d"}
		var prev Placed
		for step := range 6 {
			tms := randomTaskManagers(r, maxP, pool)
			if len(tms) > 4 {
				tms = tms[:4]
			}
			next, err := Assign(maxP, tms, prev, factor)
			if err != nil {
				t.Fatal(err)
			}
			where := fmt.Sprintf("run %d step %d (maxP %d factor %g prev %v on %v -> %v)", run, step, maxP, factor, prev.Ranges, prev.TaskManagers, tms)
			moved := check(t, where, maxP, tms, prev, next, factor)
			opt := optimum(maxP, tms, prev, factor)
			worst = max(worst, moved-opt)
			if moved > opt+Slack(maxP, len(tms), distinct(tms), factor) {
				t.Errorf("%s: moved %d, optimum %d, slack %d: got %v", where, moved, opt, Slack(maxP, len(tms), distinct(tms), factor), next)
			}
			prev = Placed{Ranges: next, TaskManagers: tms}
		}
	}
	t.Logf("worst moved - optimum: %d", worst)
}

// TestSimulationAgainstLowerBound runs long random rescale sequences at sizes too large
// for the optimum and checks moved <= LowerBound + Slack.
func TestSimulationAgainstLowerBound(t *testing.T) {
	r := rand.New(rand.NewPCG(4, 41))
	worst := 0.0
	for run := range 200 {
		maxP := []int{16, 128, 1000, 4096}[r.IntN(4)]
		factor := []float64{1.5, 2, 3}[r.IntN(3)]
		pool := []string{"a", "b", "c", "d", "e", "f", "g", "h"}
		var prev Placed
		for step := range 10 {
			tms := randomTaskManagers(r, min(maxP, 16), pool)
			next, err := Assign(maxP, tms, prev, factor)
			if err != nil {
				t.Fatal(err)
			}
			where := fmt.Sprintf("run %d step %d (maxP %d factor %g on %v)", run, step, maxP, factor, tms)
			moved := check(t, where, maxP, tms, prev, next, factor)
			lb := LowerBound(maxP, prev, tms, factor)
			_, hi := Bounds(maxP, len(tms), factor)
			worst = max(worst, float64(moved-lb)/float64(hi*distinct(tms)))
			if moved > lb+Slack(maxP, len(tms), distinct(tms), factor) {
				t.Errorf("%s: moved %d, lower bound %d, slack %d", where, moved, lb, Slack(maxP, len(tms), distinct(tms), factor))
			}
			prev = Placed{Ranges: next, TaskManagers: tms}
		}
	}
	t.Logf("worst (moved - lower bound) in largest ranges per TaskManager: %.2f", worst)
}

func distinct(tms []string) int {
	m := map[string]bool{}
	for _, t := range tms {
		m[t] = true
	}
	return len(m)
}
