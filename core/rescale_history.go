package core

import (
	"fmt"
	"slices"
	"strings"
	"time"
)

// RescaleTrigger says why a rescale (a new deployment of the job) started.
type RescaleTrigger string

const (
	TriggerInitialSchedule      RescaleTrigger = "INITIAL_SCHEDULE"
	TriggerNewResourceAvailable RescaleTrigger = "NEW_RESOURCE_AVAILABLE"
	TriggerResourceLost         RescaleTrigger = "RESOURCE_LOST"
	TriggerUpdateRequirement    RescaleTrigger = "UPDATE_REQUIREMENT"
	TriggerRecoverableFailover  RescaleTrigger = "RECOVERABLE_FAILOVER"
	TriggerBlocklistEvacuation  RescaleTrigger = "BLOCKLIST_EVACUATION"
)

// RescaleOutcome is how a rescale ended.
type RescaleOutcome string

const (
	// RescaleCompleted: the job runs again (at the same or a new parallelism).
	RescaleCompleted RescaleOutcome = "COMPLETED"
	// RescaleFailed: the job failed before running again.
	RescaleFailed RescaleOutcome = "FAILED"
	// RescaleIgnored: the job was cancelled or suspended before running again.
	RescaleIgnored RescaleOutcome = "IGNORED"
)

// VertexRescale is one vertex's parallelism before and after a rescale (0: not running).
type VertexRescale struct {
	Vertex        VertexID
	Before, After int
}

// StateSpan is the time a rescale spent in one scheduler state.
type StateSpan struct {
	State        StateName
	Enter, Leave time.Time
}

// Rescale records one rescale for the REST API (Flink's rescale timeline).
type Rescale struct {
	ID       int
	Trigger  RescaleTrigger
	Cause    string
	Start    time.Time
	End      time.Time
	Attempt  AttemptID // the attempt that ran afterwards (COMPLETED only)
	Vertices []VertexRescale
	States   []StateSpan
	Outcome  RescaleOutcome
	// KeyGroupsMoved counts the key groups whose TaskManager changed, summed over vertices
	// and over every attempt the rescale deployed (their state had to travel).
	KeyGroupsMoved int
	// Warmup is the warm-up that preceded the switch (nil: the move did not warm up).
	Warmup *WarmupSummary
}

// WarmupSummary is what a rescale's warm-up did: how long it ran before the switch, how
// many copies it planned (within max.warmup.replicas), how many were caught up, failed or
// skipped (over max.warmup.replicas), and the bytes the copies fetched.
type WarmupSummary struct {
	Duration time.Duration
	Planned  int
	Ready    int
	Failed   int
	Skipped  int
	Bytes    int64
	TimedOut bool
}

// Duration is how long the rescale took.
func (r Rescale) Duration() time.Duration { return r.End.Sub(r.Start) }

// ParallelismChange describes the per-vertex change, e.g. "src 2->3 sink 2->3".
func (r Rescale) ParallelismChange() string {
	var b strings.Builder
	for i, v := range r.Vertices {
		if i > 0 {
			b.WriteByte(' ')
		}
		fmt.Fprintf(&b, "%s %d->%d", v.Vertex, v.Before, v.After)
	}
	return b.String()
}

// rescaleHistory keeps the rescale in progress and the last finished ones.
type rescaleHistory struct {
	nextID  int
	current *Rescale
	done    []Rescale
	// nextWarmup is the warm-up of the switch about to begin a rescale.
	nextWarmup *WarmupSummary
}

// begin opens a rescale unless one is in progress (a failure during a restart belongs to
// the rescale already under way).
func (h *rescaleHistory) begin(now time.Time, trigger RescaleTrigger, cause string, state StateName, before map[VertexID]int, order []VertexID) {
	w := h.nextWarmup
	h.nextWarmup = nil
	if h.current != nil {
		return
	}
	h.nextID++
	r := &Rescale{ID: h.nextID, Trigger: trigger, Cause: cause, Start: now, Warmup: w,
		States: []StateSpan{{State: state, Enter: now}}}
	for _, v := range order {
		r.Vertices = append(r.Vertices, VertexRescale{Vertex: v, Before: before[v]})
	}
	h.current = r
}

// retrigger changes the trigger and cause of the rescale in progress (a broken connection
// to a peer that turned out to be alive: a failure, not a loss).
func (h *rescaleHistory) retrigger(trigger RescaleTrigger, cause string) {
	if h.current == nil {
		return
	}
	h.current.Trigger, h.current.Cause = trigger, cause
}

// entered notes a state transition of the rescale in progress.
func (h *rescaleHistory) entered(now time.Time, state StateName) {
	if h.current == nil {
		return
	}
	h.current.States[len(h.current.States)-1].Leave = now
	h.current.States = append(h.current.States, StateSpan{State: state, Enter: now})
}

// finish closes the rescale in progress and keeps at most size of them.
func (h *rescaleHistory) finish(now time.Time, outcome RescaleOutcome, attempt AttemptID, after map[VertexID]int, size int) (Rescale, bool) {
	if h.current == nil {
		return Rescale{}, false
	}
	r := *h.current
	h.current = nil
	r.End, r.Outcome, r.Attempt = now, outcome, attempt
	r.States[len(r.States)-1].Leave = now
	for i := range r.Vertices {
		r.Vertices[i].After = after[r.Vertices[i].Vertex]
	}
	h.done = append(h.done, r)
	if over := len(h.done) - size; over > 0 {
		h.done = slices.Delete(h.done, 0, over)
	}
	return r, true
}

// markIgnored marks a finished rescale IGNORED (it restarted without changing anything).
func (h *rescaleHistory) markIgnored(id int) Rescale {
	for i := range h.done {
		if h.done[i].ID == id {
			h.done[i].Outcome = RescaleIgnored
			return h.done[i]
		}
	}
	return Rescale{}
}
