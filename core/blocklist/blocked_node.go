package blocklist

import (
	"errors"
	"fmt"
	"strings"
	"time"
)

// NodeID names a machine: the host name on YARN and standalone, spec.nodeName on
// Kubernetes. It is a plain string so that this package need not import the core.
type NodeID = string

// Action is what blocking a node does to the resources on it.
type Action string

const (
	// MarkBlocked stops new slots from the node; slots in use keep running.
	MarkBlocked Action = "MARK_BLOCKED"
	// MarkBlockedAndEvacuate also moves every task off the node.
	MarkBlockedAndEvacuate Action = "MARK_BLOCKED_AND_EVACUATE_TASKS"
)

// ErrUnknownAction is wrapped by errors about an action that is neither MarkBlocked
// nor MarkBlockedAndEvacuate.
var ErrUnknownAction = errors.New("unknown block action")

// ParseAction returns the action named s (exactly as Flink spells it).
func ParseAction(s string) (Action, error) {
	a := Action(s)
	if !a.Valid() {
		return "", fmt.Errorf("%w %q: expected %s or %s", ErrUnknownAction, s, MarkBlocked, MarkBlockedAndEvacuate)
	}
	return a, nil
}

// Valid reports whether a is one of the two known actions.
func (a Action) Valid() bool { return a == MarkBlocked || a == MarkBlockedAndEvacuate }

// Evacuates reports whether the action moves running tasks off the node.
func (a Action) Evacuates() bool { return a == MarkBlockedAndEvacuate }

// Stronger returns the stronger of a and b: evacuating beats marking.
func (a Action) Stronger(b Action) Action {
	if a == MarkBlockedAndEvacuate || b == MarkBlockedAndEvacuate {
		return MarkBlockedAndEvacuate
	}
	return MarkBlocked
}

// BlockedNode is one blocked machine.
type BlockedNode struct {
	ID     NodeID
	Action Action
	// Start is when the blocking began; End is when the node becomes available again.
	// A zero End means the blocking never expires.
	Start, End time.Time
	Cause      string
	// EndUnset marks a request that gave no end: the scheduler sets End from
	// blocklist.default-timeout (or keeps it zero, permanent, when that is 0). A request that
	// asks for a permanent block (endTimestamp Long.MAX_VALUE) has a zero End and EndUnset
	// false, and stays permanent. Records in a Tracker never have it set.
	EndUnset bool
}

// Permanent reports whether the blocking never expires.
func (n BlockedNode) Permanent() bool { return n.End.IsZero() }

// ExpiredAt reports whether the blocking is over at now (now at or after End).
func (n BlockedNode) ExpiredAt(now time.Time) bool { return !n.End.IsZero() && !now.Before(n.End) }

// Validate checks that n can be added at now: a non-empty id, a known action, a start
// time, and an end (if any) that is after both the start and now.
func (n BlockedNode) Validate(now time.Time) error {
	var errs []error
	if err := ValidateNodeID(n.ID); err != nil {
		errs = append(errs, fmt.Errorf("blocked node: %w", err))
	}
	if !n.Action.Valid() {
		errs = append(errs, fmt.Errorf("blocked node %s: %w %q: expected %s or %s",
			Quote(n.ID, 64), ErrUnknownAction, string(n.Action), MarkBlocked, MarkBlockedAndEvacuate))
	}
	if n.Start.IsZero() {
		errs = append(errs, fmt.Errorf("blocked node %s: start time missing", Quote(n.ID, 64)))
	}
	if !n.End.IsZero() {
		if !n.Start.IsZero() && !n.End.After(n.Start) {
			errs = append(errs, fmt.Errorf("blocked node %s: end %s is not after start %s",
				Quote(n.ID, 64), n.End.UTC().Format(time.RFC3339Nano), n.Start.UTC().Format(time.RFC3339Nano)))
		}
		if !n.End.After(now) {
			errs = append(errs, fmt.Errorf("blocked node %s: end %s is not after now %s (already expired)",
				Quote(n.ID, 64), n.End.UTC().Format(time.RFC3339Nano), now.UTC().Format(time.RFC3339Nano)))
		}
	}
	return errors.Join(errs...)
}

// Merge combines n with other, a newer record for the same node: the stronger action,
// the earlier start, the later end (a zero end beats any end) and both causes with
// duplicates dropped. The id of n is kept.
func (n BlockedNode) Merge(other BlockedNode) BlockedNode {
	out := n
	out.Action = n.Action.Stronger(other.Action)
	if !other.Start.IsZero() && (n.Start.IsZero() || other.Start.Before(n.Start)) {
		out.Start = other.Start
	}
	if n.End.IsZero() || other.End.IsZero() {
		out.End = time.Time{}
	} else if other.End.After(n.End) {
		out.End = other.End
	}
	out.Cause = mergeCauses(n.Cause, other.Cause)
	out.EndUnset = false
	return out
}

// Equal reports whether n and o describe the same blocking (times compared as instants).
func (n BlockedNode) Equal(o BlockedNode) bool {
	return n.ID == o.ID && n.Action == o.Action && n.Start.Equal(o.Start) && n.End.Equal(o.End) && n.Cause == o.Cause
}

// mergeCauses joins the ","-separated causes of a and b in first-seen order, dropping
// empty and duplicate entries.
func mergeCauses(a, b string) string {
	seen := make(map[string]bool)
	var parts []string
	for _, s := range []string{a, b} {
		for p := range strings.SplitSeq(s, ",") {
			p = strings.TrimSpace(p)
			if p == "" || seen[p] {
				continue
			}
			seen[p] = true
			parts = append(parts, p)
		}
	}
	return strings.Join(parts, ",")
}
