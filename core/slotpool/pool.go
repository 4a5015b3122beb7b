package slotpool

import (
	"errors"
	"fmt"
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
type Pool struct {
	blocked BlockedFunc
	tms     map[string]*taskManager
	ids     []string // sorted
}

// New returns an empty pool that asks blocked about nodes.
func New(blocked BlockedFunc) *Pool {
	return &Pool{blocked: blocked, tms: make(map[string]*taskManager)}
}

// Register adds a TaskManager with all its slots free. A TaskManager on a blocked node is
// refused with ErrBlocked; one already registered with ErrDuplicate.
func (p *Pool) Register(now time.Time, id, node string, slots int) error {
	if _, ok := p.tms[id]; ok {
		return fmt.Errorf("register task manager %q: %w", id, ErrDuplicate)
	}
	if slots <= 0 {
		return fmt.Errorf("register task manager %q on node %q: %d slots, want >= 1", id, node, slots)
	}
	if p.blocked(node) {
		return fmt.Errorf("register task manager %q: node %q: %w", id, node, ErrBlocked)
	}
	p.tms[id] = &taskManager{id: id, node: node, slots: make([]slotState, slots), free: slots,
		registered: now, lastHeartbeat: now, idleSince: now}
	i, _ := slices.BinarySearch(p.ids, id)
	p.ids = slices.Insert(p.ids, i, id)
	return nil
}

// Remove forgets a TaskManager (lost, released). It reports whether it was registered.
func (p *Pool) Remove(id string) bool {
	if _, ok := p.tms[id]; !ok {
		return false
	}
	delete(p.tms, id)
	if i, ok := slices.BinarySearch(p.ids, id); ok {
		p.ids = slices.Delete(p.ids, i, i+1)
	}
	return true
}

// Heartbeat records a sign of life.
func (p *Pool) Heartbeat(now time.Time, id string) error {
	tm, ok := p.tms[id]
	if !ok {
		return fmt.Errorf("heartbeat from task manager %q: %w", id, ErrUnknown)
	}
	tm.lastHeartbeat = now
	return nil
}

func (p *Pool) slot(ref allocator.SlotRef) (*taskManager, error) {
	tm, ok := p.tms[ref.TaskManager]
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
	tm.reserved--
	if p.blocked(tm.node) {
		tm.slots[ref.Index] = slotReleased
	} else {
		tm.slots[ref.Index] = slotFree
		tm.free++
	}
	if tm.reserved == 0 {
		tm.idleSince = now
	}
	return tm.reserved == 0 && p.blocked(tm.node), nil
}

// ReleaseBlocked applies a newly blocked node: free slots of its TaskManagers are released.
// It returns the TaskManagers on the node that hold no reserved slot (release them whole)
// and those still running subtasks (kept until their slots are freed, unless evacuated).
func (p *Pool) ReleaseBlocked(node string) (idle, busy []string) {
	for _, id := range p.ids {
		tm := p.tms[id]
		if tm.node != node {
			continue
		}
		for i, s := range tm.slots {
			if s == slotFree {
				tm.slots[i] = slotReleased
			}
		}
		tm.free = 0
		if tm.reserved == 0 {
			idle = append(idle, id)
		} else {
			busy = append(busy, id)
		}
	}
	return idle, busy
}

// OnNode returns the TaskManagers registered on a node, sorted.
func (p *Pool) OnNode(node string) []string {
	var out []string
	for _, id := range p.ids {
		if p.tms[id].node == node {
			out = append(out, id)
		}
	}
	return out
}

// Node returns the node of a TaskManager.
func (p *Pool) Node(id string) (string, bool) {
	tm, ok := p.tms[id]
	if !ok {
		return "", false
	}
	return tm.node, true
}

// Has reports whether a TaskManager is registered.
func (p *Pool) Has(id string) bool { _, ok := p.tms[id]; return ok }

// FreeSlots lists the free slots usable for a plan (never on a blocked node), TaskManagers
// sorted by id. buf is reused when large enough.
func (p *Pool) FreeSlots(buf []allocator.TaskManager) []allocator.TaskManager {
	out := buf[:0]
	for _, id := range p.ids {
		tm := p.tms[id]
		if tm.free == 0 || p.blocked(tm.node) {
			continue
		}
		free := make([]int, 0, tm.free)
		for i, s := range tm.slots {
			if s == slotFree {
				free = append(free, i)
			}
		}
		out = append(out, allocator.TaskManager{ID: id, Free: free})
	}
	return out
}

// Counts returns the number of usable slots and of free usable slots. Reserved slots
// count as usable even on a blocked node (MARK_BLOCKED lets their subtasks run on; they
// are released when freed), free slots only off blocked nodes.
func (p *Pool) Counts() (usable, free int) {
	for _, id := range p.ids {
		tm := p.tms[id]
		usable += tm.reserved
		if !p.blocked(tm.node) {
			usable += tm.free
			free += tm.free
		}
	}
	return usable, free
}

// Len returns the number of registered TaskManagers.
func (p *Pool) Len() int { return len(p.ids) }
