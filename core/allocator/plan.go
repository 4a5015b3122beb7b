package allocator

import (
	"cmp"
	"iter"
	"slices"
	"strings"
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
	// Workspace, when set, lends its memory to the decision (see Workspace).
	Workspace *Workspace
}

// Decide plans the job on the given free slots. ok is false when they cannot satisfy the
// lower bounds. The result depends only on its inputs (TaskManagers are ordered by ID
// where nothing else orders them; entries sharing an ID count as one TaskManager).
//
// Its cost is linear in the number of slots when tms come sorted by ID, as the slot pool
// lists them: TaskManagers are handled as positions in tms, never as map keys.
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
	ws := opts.Workspace
	if ws == nil {
		ws = new(Workspace)
	}
	var ix *tmIndex
	var prev []int32
	if len(opts.Previous) > 0 {
		ix = ws.indexTaskManagers(tms)
		prev = previousCounts(opts.Previous, gs, ix, ws)
	}
	order := orderTaskManagers(tms, ix, prev, opts.PreferMinimalTaskManagers, ws)
	take := slotsToTake(tms, order, needed, opts.PreferMinimalTaskManagers)
	// Every element is written below: no need to clear reused memory first.
	if cap(ws.assignments) < needed {
		ws.assignments = make([]Assignment, needed)
	}
	out := ws.assignments[:needed]
	plan = Plan{Parallelism: vertexParallelism(vertices, gs)}
	if ix == nil {
		// Common case: hand the slots to the groups in order, as they are taken.
		k, g, i := 0, 0, 0
		for tm, slot := range take {
			for i >= gs[g].slots {
				g, i = g+1, 0
			}
			out[k] = Assignment{Slot: SlotRef{TaskManager: tms[tm].ID, Index: slot}, GroupIndex: GroupIndex{Group: gs[g].name, Index: i}}
			k, i = k+1, i+1
		}
		plan.Assignments = out[:k]
		return plan, true
	}
	if cap(ws.chosen) < needed {
		ws.chosen = make([]slotPos, 0, needed)
	}
	ws.chosen = ws.chosen[:0]
	for tm, slot := range take {
		ws.chosen = append(ws.chosen, slotPos{tm: tm, slot: slot})
	}
	plan.Assignments = out[:len(ws.chosen)]
	assign(plan.Assignments, tms, gs, ws.chosen, ix, ws)
	return plan, true
}

// slotPos is a chosen slot: tms[tm] and its slot index.
type slotPos struct {
	tm   int32
	slot int
}

// tmKey is what orders one TaskManager (position i in tms) for the slot choice.
type tmKey struct {
	free int
	prev int32
	i    int32
}

// orderTaskManagers returns the TaskManagers in the order slots are taken from them: with
// packed, fullest first; then those hosting the most previous execution groups; then by
// ID. prev (per canonical position, nil without a previous placement) comes from
// previousCounts.
func orderTaskManagers(tms []TaskManager, ix *tmIndex, prev []int32, packed bool, ws *Workspace) []tmKey {
	ws.keys = resize(ws.keys, len(tms))
	keys := ws.keys
	for i, tm := range tms {
		keys[i] = tmKey{free: len(tm.Free), i: int32(i)}
		if prev != nil {
			keys[i].prev = prev[ix.canon[i]]
		}
	}
	compare := func(a, b tmKey) int {
		if packed {
			if c := cmp.Compare(b.free, a.free); c != 0 {
				return c
			}
		}
		if c := cmp.Compare(b.prev, a.prev); c != 0 {
			return c
		}
		return strings.Compare(tms[a.i].ID, tms[b.i].ID)
	}
	// The pool lists TaskManagers by ID, and usually all alike: often nothing to sort.
	if !slices.IsSortedFunc(keys, compare) {
		slices.SortFunc(keys, compare)
	}
	return keys
}

// tmIndex finds TaskManagers of a decision by ID. Every position in tms has a canonical
// position, the first entry with its ID, so that duplicate entries count as one.
type tmIndex struct {
	tms   []TaskManager
	canon []int32
	byID  map[string]int32 // nil when tms are sorted by ID (binary search then)
	last  int32            // canonical position of the last ID found; -1: none yet
}

// indexTaskManagers returns the workspace's index, reset for tms.
func (ws *Workspace) indexTaskManagers(tms []TaskManager) *tmIndex {
	ix := &ws.index
	*ix = tmIndex{tms: tms, canon: resize(ix.canon, len(tms)), last: -1}
	sorted := true
	for i := range tms {
		ix.canon[i] = int32(i)
		if i > 0 {
			switch c := strings.Compare(tms[i-1].ID, tms[i].ID); {
			case c == 0:
				ix.canon[i] = ix.canon[i-1]
			case c > 0:
				sorted = false
			}
		}
	}
	if sorted {
		return ix
	}
	ix.byID = make(map[string]int32, len(tms))
	for i, tm := range tms {
		if first, ok := ix.byID[tm.ID]; ok {
			ix.canon[i] = first
			continue
		}
		ix.byID[tm.ID] = int32(i)
		ix.canon[i] = int32(i)
	}
	return ix
}

// find returns the canonical position of a TaskManager. Lookups come in runs (an
// execution group's neighbours ran on the same TaskManager, or on the next one), so the
// last answer and its successor are tried first.
func (ix *tmIndex) find(id string) (int32, bool) {
	if l := ix.last; l >= 0 {
		if ix.tms[l].ID == id {
			return l, true
		}
		if n := int(l) + 1; n < len(ix.tms) && ix.tms[n].ID == id {
			ix.last = ix.canon[n]
			return ix.last, true
		}
	}
	var i int32
	if ix.byID != nil {
		p, ok := ix.byID[id]
		if !ok {
			return 0, false
		}
		i = p
	} else {
		p, ok := slices.BinarySearchFunc(ix.tms, id, func(tm TaskManager, id string) int { return strings.Compare(tm.ID, id) })
		if !ok {
			return 0, false
		}
		i = int32(p)
	}
	ix.last = i
	return i, true
}

// previousCounts counts, per canonical TaskManager position, the execution groups that
// ran there and still exist in the new plan. It notes in ws.previous where each execution
// group ran (group after group, -1: nowhere among tms) for assign.
func previousCounts(previous map[string][]string, gs []group, ix *tmIndex, ws *Workspace) []int32 {
	n := len(ix.tms)
	ws.counters = resize(ws.counters, 4*n)
	counts := ws.counters[3*n:]
	groups := 0
	for _, g := range gs {
		groups += g.slots
	}
	ws.previous = resize(ws.previous, groups)
	o := 0
	for _, g := range gs {
		list := previous[g.name]
		for i := 0; i < g.slots; i++ {
			ws.previous[o] = -1
			if i < len(list) && list[i] != "" {
				if t, ok := ix.find(list[i]); ok {
					counts[t]++
					ws.previous[o] = t
				}
			}
			o++
		}
	}
	return counts
}

// slotsToTake yields the TaskManager (position in tms) and index of the slots a decision
// takes, needed of them at most, in the order it takes them: packed (every free slot of
// one TaskManager before the next) or spread (one slot of each TaskManager in turn).
func slotsToTake(tms []TaskManager, order []tmKey, needed int, packed bool) iter.Seq2[int32, int] {
	if packed {
		return func(yield func(int32, int) bool) { pack(tms, order, needed, yield) }
	}
	return func(yield func(int32, int) bool) { spread(tms, order, needed, yield) }
}

func pack(tms []TaskManager, order []tmKey, needed int, yield func(int32, int) bool) {
	n := 0
	for _, k := range order {
		for _, idx := range tms[k.i].Free {
			if n == needed || !yield(k.i, idx) {
				return
			}
			n++
		}
	}
}

func spread(tms []TaskManager, order []tmKey, needed int, yield func(int32, int) bool) {
	live := make([]int32, len(order))
	for j, k := range order {
		live[j] = k.i
	}
	n := 0
	for round := 0; n < needed && len(live) > 0; round++ {
		next := live[:0]
		for _, i := range live {
			if round >= len(tms[i].Free) {
				continue
			}
			if n == needed {
				break
			}
			if !yield(i, tms[i].Free[round]) {
				return
			}
			n++
			next = append(next, i)
		}
		live = next
	}
}

// assign maps every execution slot-sharing group onto one chosen slot, keeping groups on
// their previous TaskManager (as previousCounts noted it) where possible, and writes the
// assignments to out (one per chosen slot): first those kept in place, in group order,
// then the rest in group order on the remaining slots in chosen order.
func assign(out []Assignment, tms []TaskManager, gs []group, chosen []slotPos, ix *tmIndex, ws *Workspace) {
	// Positions in chosen per canonical TaskManager, in one backing array: start[t] is
	// where its positions begin, next[t] how many of them are already used (the fourth
	// part of the counters holds previousCounts' result).
	n := len(tms)
	count, start, next := ws.counters[:n:n], ws.counters[n:2*n:2*n], ws.counters[2*n:3*n:3*n]
	for _, c := range chosen {
		count[ix.canon[c.tm]]++
	}
	off := int32(0)
	for t, c := range count {
		start[t] = off
		off += c
	}
	ws.positions = resize(ws.positions, len(chosen))
	positions := ws.positions
	for k, c := range chosen {
		t := ix.canon[c.tm]
		positions[start[t]+next[t]] = int32(k)
		next[t]++
	}
	clear(next)
	ref := func(k int32) SlotRef { return SlotRef{TaskManager: tms[chosen[k].tm].ID, Index: chosen[k].slot} }
	ws.used = resize(ws.used, len(chosen))
	used := ws.used
	rest := ws.rest[:0] // usually few: most groups stay in place
	o := 0
	p := 0
	for gi, g := range gs {
		for i := 0; i < g.slots; i, p = i+1, p+1 {
			if t := ws.previous[p]; t >= 0 && next[t] < count[t] {
				k := positions[start[t]+next[t]]
				next[t]++
				used[k] = true
				out[o] = Assignment{Slot: ref(k), GroupIndex: GroupIndex{Group: g.name, Index: i}}
				o++
				continue
			}
			rest = append(rest, pending{group: int32(gi), index: int32(i)})
		}
	}
	k := int32(0)
	for _, r := range rest {
		if o == len(out) {
			break
		}
		for used[k] {
			k++
		}
		used[k] = true
		out[o] = Assignment{Slot: ref(k), GroupIndex: GroupIndex{Group: gs[r.group].name, Index: int(r.index)}}
		o++
	}
	clear(out[o:])
	ws.rest = rest[:0]
}
