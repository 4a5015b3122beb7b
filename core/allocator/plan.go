package allocator

import (
	"cmp"
	"slices"
)

// TaskManager lists the free slots of one TaskManager, as the slot pool reports them.
type TaskManager struct {
	ID   string
	Free []int // indexes of free slots
}

// SlotRef names one slot.
type SlotRef struct {
	TaskManager string
	Index       int
}

// GroupIndex names one execution slot-sharing group: subtask Index of every vertex of Group.
type GroupIndex struct {
	Group string
	Index int
}

// Assignment places one execution slot-sharing group into a slot.
type Assignment struct {
	Slot SlotRef
	GroupIndex
}

// Plan is one scheduling decision.
type Plan struct {
	Parallelism Parallelism
	Assignments []Assignment
}

// Options tune the slot choice; the parallelism does not depend on them.
type Options struct {
	// PreferMinimalTaskManagers fills the fewest TaskManagers (fullest first) so that whole
	// TaskManagers stay idle and can be released; otherwise subtasks spread round-robin.
	PreferMinimalTaskManagers bool
	// Previous is, per slot-sharing group, the TaskManager each subtask index ran on in
	// the last attempt; the plan keeps an index there when that TaskManager is used and
	// has a slot left (state locality across rescales).
	Previous map[string][]string
}

// Decide plans the job on the given free slots. ok is false when they cannot satisfy the
// lower bounds. The result depends only on its inputs (TaskManagers are ordered by ID
// where nothing else orders them).
func Decide(vertices []Vertex, tms []TaskManager, opts Options) (plan Plan, ok bool) {
	total := 0
	for _, tm := range tms {
		total += len(tm.Free)
	}
	gs, ok := groupSlots(vertices, total)
	if !ok {
		return Plan{}, false
	}
	needed := 0
	for _, g := range gs {
		needed += g.slots
	}
	prev := previousCounts(opts.Previous, gs)
	order := make([]int, len(tms))
	for i := range order {
		order[i] = i
	}
	slices.SortFunc(order, func(a, b int) int {
		if opts.PreferMinimalTaskManagers {
			if c := cmp.Compare(len(tms[b].Free), len(tms[a].Free)); c != 0 {
				return c
			}
		}
		if prev != nil {
			if c := cmp.Compare(prev[tms[b].ID], prev[tms[a].ID]); c != 0 {
				return c
			}
		}
		return cmp.Compare(tms[a].ID, tms[b].ID)
	})
	plan = Plan{Parallelism: vertexParallelism(vertices, gs)}
	if len(opts.Previous) == 0 {
		// Common case: hand the chosen slots to the groups in order, without a copy.
		plan.Assignments = make([]Assignment, 0, needed)
		g, i := 0, 0
		choose(tms, order, needed, opts.PreferMinimalTaskManagers, func(s SlotRef) {
			for i >= gs[g].slots {
				g, i = g+1, 0
			}
			plan.Assignments = append(plan.Assignments, Assignment{Slot: s, GroupIndex: GroupIndex{Group: gs[g].name, Index: i}})
			i++
		})
		return plan, true
	}
	chosen := make([]SlotRef, 0, needed)
	choose(tms, order, needed, opts.PreferMinimalTaskManagers, func(s SlotRef) { chosen = append(chosen, s) })
	plan.Assignments = assign(gs, chosen, opts.Previous)
	return plan, true
}

// choose hands needed slots to take: packed (every free slot of one TaskManager before
// the next) or spread (one slot of each TaskManager in turn).
func choose(tms []TaskManager, order []int, needed int, packed bool, take func(SlotRef)) {
	if packed {
		pack(tms, order, needed, take)
	} else {
		spread(tms, order, needed, take)
	}
}

// previousCounts counts, per TaskManager, the execution groups that ran there and still
// exist in the new plan.
func previousCounts(previous map[string][]string, gs []group) map[string]int {
	if len(previous) == 0 {
		return nil
	}
	counts := make(map[string]int)
	for _, g := range gs {
		for i, tm := range previous[g.name] {
			if i < g.slots && tm != "" {
				counts[tm]++
			}
		}
	}
	return counts
}

// previousTM returns where subtask index of group ran last time.
func previousTM(previous map[string][]string, gi GroupIndex) (string, bool) {
	tms := previous[gi.Group]
	if gi.Index >= len(tms) || tms[gi.Index] == "" {
		return "", false
	}
	return tms[gi.Index], true
}

// pack takes every free slot of one TaskManager before moving to the next.
func pack(tms []TaskManager, order []int, needed int, take func(SlotRef)) {
	n := 0
	for _, i := range order {
		for _, idx := range tms[i].Free {
			if n == needed {
				return
			}
			take(SlotRef{TaskManager: tms[i].ID, Index: idx})
			n++
		}
	}
}

// spread takes one slot from each TaskManager in turn.
func spread(tms []TaskManager, order []int, needed int, take func(SlotRef)) {
	n := 0
	live := slices.Clone(order)
	for round := 0; n < needed && len(live) > 0; round++ {
		next := live[:0]
		for _, i := range live {
			if round >= len(tms[i].Free) {
				continue
			}
			if n == needed {
				break
			}
			take(SlotRef{TaskManager: tms[i].ID, Index: tms[i].Free[round]})
			n++
			next = append(next, i)
		}
		live = next
	}
}

// assign maps every execution slot-sharing group onto one chosen slot, keeping groups on
// their previous TaskManager where possible.
func assign(gs []group, chosen []SlotRef, previous map[string][]string) []Assignment {
	out := make([]Assignment, 0, len(chosen))
	// Positions in chosen per TaskManager, in one backing array: start[tm] is where its
	// positions begin, next[tm] how many of them are already used.
	count := make(map[string]int)
	for _, s := range chosen {
		count[s.TaskManager]++
	}
	start := make(map[string]int, len(count))
	off := 0
	for _, s := range chosen {
		if _, ok := start[s.TaskManager]; !ok {
			start[s.TaskManager] = off
			off += count[s.TaskManager]
		}
	}
	positions := make([]int, len(chosen))
	filled := make(map[string]int, len(count))
	for k, s := range chosen {
		positions[start[s.TaskManager]+filled[s.TaskManager]] = k
		filled[s.TaskManager]++
	}
	next := make(map[string]int, len(count))
	used := make([]bool, len(chosen))
	rest := make([]GroupIndex, 0, len(chosen))
	for _, g := range gs {
		for i := 0; i < g.slots; i++ {
			gi := GroupIndex{Group: g.name, Index: i}
			tm, ok := previousTM(previous, gi)
			if ok && next[tm] < count[tm] {
				k := positions[start[tm]+next[tm]]
				next[tm]++
				used[k] = true
				out = append(out, Assignment{Slot: chosen[k], GroupIndex: gi})
				continue
			}
			rest = append(rest, gi)
		}
	}
	k := 0
	for _, gi := range rest {
		for used[k] {
			k++
		}
		used[k] = true
		out = append(out, Assignment{Slot: chosen[k], GroupIndex: gi})
	}
	return out
}
