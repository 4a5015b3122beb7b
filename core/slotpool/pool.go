package slotpool

import (
	"cmp"
	"errors"
	"fmt"
	"iter"
	"slices"
	"time"

	"github.com/tidestream/tide/core/allocator"
)

var (
	// ErrBlocked: the TaskManager's node is blocked.
	ErrBlocked = errors.New("node is blocked")
	// ErrDuplicate: the TaskManager is already registered.
	ErrDuplicate = errors.New("task manager already registered")
	// ErrUnknown: no such TaskManager or slot.
	ErrUnknown = errors.New("unknown task manager or slot")
	// ErrNotFree: the slot is not free (reserved or released).
	ErrNotFree = errors.New("slot is not free")
	// ErrNotReserved: the slot is not reserved.
	ErrNotReserved = errors.New("slot is not reserved")
)

type slotState uint8

const (
	slotFree slotState = iota
	slotReserved
	slotReleased
)

type taskManager struct {
	id, node      string
	pos           int // in Pool.sorted
	slots         []slotState
	reserved      int
	free          int
	registered    time.Time
	lastHeartbeat time.Time
	idleSince     time.Time // when its last reserved slot was freed (or it registered)
}

// BlockedFunc reports whether a node is blocked.
type BlockedFunc func(node string) bool

// Pool is the slot pool. It is not safe for concurrent use.
//
// A scheduling decision reserves and later frees one slot per execution group, tens of
// thousands at a time, and those slots come in runs on one TaskManager, the runs mostly in
// id order: lookups try the TaskManager found last and its successor in id order before
// the map, and whole-pool walks go through the sorted slice without touching the map.
type Pool struct {
	// KeepBlocked keeps TaskManagers on blocked nodes (standalone: the AM never ends a
	// TaskManager process): they may register, and their slots stay free but unusable
	// while the node is blocked instead of being released, so they serve again when the
	// block ends.
	KeepBlocked bool

	blocked BlockedFunc
	tms     map[string]*taskManager
	sorted  []*taskManager // by id; sorted[i].pos == i
	last    int            // position in sorted of the TaskManager found last
}

func compareID(tm *taskManager, id string) int { return cmp.Compare(tm.id, id) }

// renumber sets the positions of sorted[from:] after an insertion or removal at from.
func (p *Pool) renumber(from int) {
	for i := from; i < len(p.sorted); i++ {
		p.sorted[i].pos = i
	}
}

// lookup returns a registered TaskManager by id.
func (p *Pool) lookup(id string) (*taskManager, bool) {
	if p.last < len(p.sorted) {
		if tm := p.sorted[p.last]; tm.id == id {
			return tm, true
		}
		if n := p.last + 1; n < len(p.sorted) && p.sorted[n].id == id {
			p.last = n
			return p.sorted[n], true
		}
	}
	tm, ok := p.tms[id]
	if ok {
		p.last = tm.pos
	}
	return tm, ok
}

// New returns an empty pool that asks blocked about nodes.
func New(blocked BlockedFunc) *Pool {
	return &Pool{blocked: blocked, tms: make(map[string]*taskManager)}
}

// Register adds a TaskManager with all its slots free. A TaskManager on a blocked node is
// refused with ErrBlocked (unless KeepBlocked); one already registered with ErrDuplicate.
func (p *Pool) Register(now time.Time, id, node string, slots int) error {
	if _, ok := p.tms[id]; ok {
		return fmt.Errorf("register task manager %q: %w", id, ErrDuplicate)
	}
	if slots <= 0 {
		return fmt.Errorf("register task manager %q on node %q: %d slots, want >= 1", id, node, slots)
	}
	if p.blocked(node) && !p.KeepBlocked {
		return fmt.Errorf("register task manager %q: node %q: %w", id, node, ErrBlocked)
	}
	tm := &taskManager{id: id, node: node, slots: make([]slotState, slots), free: slots,
		registered: now, lastHeartbeat: now, idleSince: now}
	p.tms[id] = tm
	i, _ := slices.BinarySearchFunc(p.sorted, id, compareID)
	p.sorted = slices.Insert(p.sorted, i, tm)
	p.renumber(i)
	return nil
}

// Remove forgets a TaskManager (lost, released). It reports whether it was registered.
func (p *Pool) Remove(id string) bool {
	tm, ok := p.tms[id]
	if !ok {
		return false
	}
	delete(p.tms, id)
	p.sorted = slices.Delete(p.sorted, tm.pos, tm.pos+1)
	p.renumber(tm.pos)
	return true
}

// Heartbeat records a sign of life.
func (p *Pool) Heartbeat(now time.Time, id string) error {
	tm, ok := p.lookup(id)
	if !ok {
		return fmt.Errorf("heartbeat from task manager %q: %w", id, ErrUnknown)
	}
	tm.lastHeartbeat = now
	return nil
}

func (p *Pool) slot(ref allocator.SlotRef) (*taskManager, error) {
	tm, ok := p.lookup(ref.TaskManager)
	if !ok || ref.Index < 0 || ref.Index >= len(tm.slots) {
		return nil, fmt.Errorf("slot %s/%d: %w", ref.TaskManager, ref.Index, ErrUnknown)
	}
	return tm, nil
}

// Reserve marks a free slot reserved. A slot on a blocked node is never handed out.
func (p *Pool) Reserve(ref allocator.SlotRef) error {
	tm, err := p.slot(ref)
	if err != nil {
		return fmt.Errorf("reserve: %w", err)
	}
	if tm.slots[ref.Index] != slotFree {
		return fmt.Errorf("reserve slot %s/%d: %w", ref.TaskManager, ref.Index, ErrNotFree)
	}
	if p.blocked(tm.node) {
		return fmt.Errorf("reserve slot %s/%d: node %q: %w", ref.TaskManager, ref.Index, tm.node, ErrBlocked)
	}
	tm.slots[ref.Index] = slotReserved
	tm.reserved++
	tm.free--
	return nil
}

// ReserveAssigned reserves the slot of every assignment in order, as Reserve would, and
// stops at the first that fails: it returns how many it reserved (as[:n]) and that error.
// Assignments come in runs on one TaskManager, so each run costs one lookup and one
// blocked-node check.
func (p *Pool) ReserveAssigned(as []allocator.Assignment) (n int, err error) {
	var tm *taskManager
	blocked := false
	for n = range as {
		ref := as[n].Slot
		if tm == nil || tm.id != ref.TaskManager {
			var ok bool
			if tm, ok = p.lookup(ref.TaskManager); !ok {
				return n, fmt.Errorf("reserve: slot %s/%d: %w", ref.TaskManager, ref.Index, ErrUnknown)
			}
			blocked = p.blocked(tm.node)
		}
		switch {
		case ref.Index < 0 || ref.Index >= len(tm.slots):
			return n, fmt.Errorf("reserve: slot %s/%d: %w", ref.TaskManager, ref.Index, ErrUnknown)
		case tm.slots[ref.Index] != slotFree:
			return n, fmt.Errorf("reserve slot %s/%d: %w", ref.TaskManager, ref.Index, ErrNotFree)
		case blocked:
			return n, fmt.Errorf("reserve slot %s/%d: node %q: %w", ref.TaskManager, ref.Index, tm.node, ErrBlocked)
		}
		tm.slots[ref.Index] = slotReserved
		tm.reserved++
		tm.free--
	}
	return len(as), nil
}

// Free returns a reserved slot. On a blocked node the slot is released instead; release
// is then true when the TaskManager holds nothing any more and should be released whole.
func (p *Pool) Free(now time.Time, ref allocator.SlotRef) (release bool, err error) {
	tm, err := p.slot(ref)
	if err != nil {
		return false, fmt.Errorf("free: %w", err)
	}
	if tm.slots[ref.Index] != slotReserved {
		return false, fmt.Errorf("free slot %s/%d: %w", ref.TaskManager, ref.Index, ErrNotReserved)
	}
	return tm.freeReserved(now, ref.Index, p.releasesBlocked(tm.node)), nil
}

// freeReserved returns reserved slot i (released instead on a blocked node) and reports
// whether the TaskManager is now empty on a blocked node, to be released whole.
func (tm *taskManager) freeReserved(now time.Time, i int, blocked bool) (release bool) {
	tm.reserved--
	if blocked {
		tm.slots[i] = slotReleased
	} else {
		tm.slots[i] = slotFree
		tm.free++
	}
	if tm.reserved == 0 {
		tm.idleSince = now
	}
	return tm.reserved == 0 && blocked
}

// FreeAll frees every slot of refs as Free would, skipping slots whose TaskManager is not
// registered (any more). It returns how many slots were on registered TaskManagers, the
// TaskManagers to release whole in the order they became so, and the errors of slots that
// could not be freed. Runs of slots on one TaskManager cost one lookup and one
// blocked-node check.
func (p *Pool) FreeAll(now time.Time, refs iter.Seq[allocator.SlotRef]) (registered int, release []string, err error) {
	var errs []error
	var tm *taskManager
	blocked := false
	for ref := range refs {
		if tm == nil || tm.id != ref.TaskManager {
			var ok bool
			if tm, ok = p.lookup(ref.TaskManager); !ok {
				continue
			}
			blocked = p.releasesBlocked(tm.node)
		}
		registered++
		switch {
		case ref.Index < 0 || ref.Index >= len(tm.slots):
			errs = append(errs, fmt.Errorf("free: slot %s/%d: %w", ref.TaskManager, ref.Index, ErrUnknown))
			continue
		case tm.slots[ref.Index] != slotReserved:
			errs = append(errs, fmt.Errorf("free slot %s/%d: %w", ref.TaskManager, ref.Index, ErrNotReserved))
			continue
		}
		if tm.freeReserved(now, ref.Index, blocked) {
			release = append(release, tm.id)
		}
	}
	return registered, release, errors.Join(errs...)
}

// ReleaseBlocked applies a newly blocked node: free slots of its TaskManagers are released.
// It returns the TaskManagers on the node that hold no reserved slot (release them whole)
// and those still running subtasks (kept until their slots are freed, unless evacuated).
// With KeepBlocked nothing is released: the free slots stay free and unusable.
func (p *Pool) ReleaseBlocked(node string) (idle, busy []string) {
	for _, tm := range p.sorted {
		if tm.node != node {
			continue
		}
		id := tm.id
		if !p.KeepBlocked {
			for i, s := range tm.slots {
				if s == slotFree {
					tm.slots[i] = slotReleased
				}
			}
			tm.free = 0
		}
		if tm.reserved == 0 {
			idle = append(idle, id)
		} else {
			busy = append(busy, id)
		}
	}
	return idle, busy
}

// releasesBlocked reports whether a freed slot on node is released rather than freed.
func (p *Pool) releasesBlocked(node string) bool { return !p.KeepBlocked && p.blocked(node) }

// OnNode returns the TaskManagers registered on a node, sorted.
func (p *Pool) OnNode(node string) []string {
	var out []string
	for _, tm := range p.sorted {
		if tm.node == node {
			out = append(out, tm.id)
		}
	}
	return out
}

// Node returns the node of a TaskManager.
func (p *Pool) Node(id string) (string, bool) {
	tm, ok := p.lookup(id)
	if !ok {
		return "", false
	}
	return tm.node, true
}

// Has reports whether a TaskManager is registered.
func (p *Pool) Has(id string) bool { _, ok := p.lookup(id); return ok }

// FreeSlots lists the free slots usable for a plan (never on a blocked node), TaskManagers
// sorted by id. buf is reused when large enough, and so are the Free slices in it (a
// result is valid until the next call with the same buf); what is missing is carved out
// of one new backing array.
func (p *Pool) FreeSlots(buf []allocator.TaskManager) []allocator.TaskManager {
	out := buf[:0]
	var backing []int // shared by the TaskManagers whose old Free slice is too small
	for _, tm := range p.sorted {
		if tm.free == 0 || p.blocked(tm.node) {
			continue
		}
		var free []int
		if n := len(out); n < cap(out) && cap(out[:n+1][n].Free) >= tm.free {
			free = out[:n+1][n].Free[:0]
		} else {
			if cap(backing)-len(backing) < tm.free {
				backing = make([]int, 0, max(p.freeAfter(tm), tm.free))
			}
			free = backing[len(backing) : len(backing) : len(backing)+tm.free]
			backing = backing[:len(backing)+tm.free]
		}
		for i, s := range tm.slots {
			if s == slotFree {
				free = append(free, i)
			}
		}
		out = append(out, allocator.TaskManager{ID: tm.id, Free: free})
	}
	return out
}

// freeAfter counts the free slots from tm on in id order, an upper bound of what
// FreeSlots still has to list when it reaches tm.
func (p *Pool) freeAfter(tm *taskManager) int {
	n := 0
	for _, t := range p.sorted[tm.pos:] {
		n += t.free
	}
	return n
}

// Counts returns the number of usable slots and of free usable slots. Reserved slots
// count as usable even on a blocked node (MARK_BLOCKED lets their subtasks run on; they
// are released when freed), free slots only off blocked nodes.
func (p *Pool) Counts() (usable, free int) {
	for _, tm := range p.sorted {
		usable += tm.reserved
		if !p.blocked(tm.node) {
			usable += tm.free
			free += tm.free
		}
	}
	return usable, free
}

// BlockedFree returns the free slots that sit unused on blocked nodes (KeepBlocked) and
// those nodes, sorted: what a wait for slots would get once the block ends.
func (p *Pool) BlockedFree() (slots int, nodes []string) {
	for _, tm := range p.sorted {
		if tm.free > 0 && p.blocked(tm.node) {
			slots += tm.free
			if !slices.Contains(nodes, tm.node) {
				nodes = append(nodes, tm.node)
			}
		}
	}
	slices.Sort(nodes)
	return slots, nodes
}

// UnblockedSlots returns the number of slots, reserved or free, of TaskManagers off
// blocked nodes: what the job can run on once an evacuation has freed the blocked ones.
func (p *Pool) UnblockedSlots() int {
	n := 0
	for _, tm := range p.sorted {
		if !p.blocked(tm.node) {
			n += len(tm.slots)
		}
	}
	return n
}

// Len returns the number of registered TaskManagers.
func (p *Pool) Len() int { return len(p.sorted) }
