package blocklist

import (
	"slices"
	"strings"
	"time"
)

// Tracker holds the currently blocked nodes. It is not safe for concurrent use; the
// core's single event loop owns it.
type Tracker struct {
	nodes map[NodeID]BlockedNode
}

// NewTracker returns an empty tracker.
func NewTracker() *Tracker { return &Tracker{nodes: make(map[NodeID]BlockedNode)} }

// Add blocks nodes at now. A node not yet blocked is added (a zero Start becomes now); a
// node already blocked is merged with its record (see BlockedNode.Merge). It returns the
// newly added records and the merged records that changed, each sorted by id; a merge
// that changes nothing is in neither list. Nodes that fail Validate(now) after the start
// is filled in are skipped (callers that need the reason validate first), so they also
// appear in neither list. Several records for one id in one call merge in order.
func (t *Tracker) Add(now time.Time, nodes ...BlockedNode) (added, merged []BlockedNode) {
	newIDs := make(map[NodeID]bool)
	changedIDs := make(map[NodeID]bool)
	for _, n := range nodes {
		if n.Start.IsZero() {
			n.Start = now
		}
		n.Cause = mergeCauses(n.Cause, "")
		n.EndUnset = false // the scheduler resolves it before Add; a record never keeps it
		if n.Validate(now) != nil {
			continue
		}
		old, ok := t.nodes[n.ID]
		if !ok {
			t.nodes[n.ID] = n
			newIDs[n.ID] = true
			continue
		}
		m := old.Merge(n)
		if m.Equal(old) {
			continue
		}
		t.nodes[n.ID] = m
		if !newIDs[n.ID] {
			changedIDs[n.ID] = true
		}
	}
	return t.collect(newIDs), t.collect(changedIDs)
}

func (t *Tracker) collect(ids map[NodeID]bool) []BlockedNode {
	if len(ids) == 0 {
		return nil
	}
	out := make([]BlockedNode, 0, len(ids))
	for id := range ids {
		out = append(out, t.nodes[id])
	}
	sortByID(out)
	return out
}

// Remove unblocks the given nodes and returns the records removed, sorted by id. Ids
// that are not blocked are ignored.
func (t *Tracker) Remove(ids ...NodeID) []BlockedNode {
	var out []BlockedNode
	for _, id := range ids {
		if n, ok := t.nodes[id]; ok {
			out = append(out, n)
			delete(t.nodes, id)
		}
	}
	sortByID(out)
	return out
}

// RemoveExpired unblocks every node whose end is at or before now and returns them,
// sorted by id.
func (t *Tracker) RemoveExpired(now time.Time) []BlockedNode {
	var out []BlockedNode
	for id, n := range t.nodes {
		if n.ExpiredAt(now) {
			out = append(out, n)
			delete(t.nodes, id)
		}
	}
	sortByID(out)
	return out
}

// IsBlocked reports whether id is blocked. Expiry is applied only by RemoveExpired, so
// the answer is stable between calls of the core.
func (t *Tracker) IsBlocked(id NodeID) bool {
	_, ok := t.nodes[id]
	return ok
}

// Get returns the record of id.
func (t *Tracker) Get(id NodeID) (BlockedNode, bool) {
	n, ok := t.nodes[id]
	return n, ok
}

// All returns every blocked node, sorted by id.
func (t *Tracker) All() []BlockedNode {
	out := make([]BlockedNode, 0, len(t.nodes))
	for _, n := range t.nodes {
		out = append(out, n)
	}
	sortByID(out)
	return out
}

// IDs returns the ids of every blocked node, sorted; this is what drivers need.
func (t *Tracker) IDs() []NodeID {
	out := make([]NodeID, 0, len(t.nodes))
	for id := range t.nodes {
		out = append(out, id)
	}
	slices.Sort(out)
	return out
}

// Len returns the number of blocked nodes (the numBlockedNodes gauge).
func (t *Tracker) Len() int { return len(t.nodes) }

// NextExpiry returns the earliest end among the nodes that expire; false when none do.
// The core arms a timer for it and calls RemoveExpired when it fires.
func (t *Tracker) NextExpiry() (time.Time, bool) {
	var next time.Time
	found := false
	for _, n := range t.nodes {
		if n.End.IsZero() {
			continue
		}
		if !found || n.End.Before(next) {
			next, found = n.End, true
		}
	}
	return next, found
}

func sortByID(ns []BlockedNode) {
	slices.SortFunc(ns, func(a, b BlockedNode) int { return strings.Compare(a.ID, b.ID) })
}
