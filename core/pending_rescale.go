package core

import (
	"fmt"
	"maps"
	"strings"
	"time"

	"github.com/tidestream/tide/core/allocator"
)

// PendingReason says why a rescale the slots or the requirements call for has not
// happened yet (REST, `tide status`, `tide rescale --wait`).
type PendingReason string

const (
	// PendingNone: nothing is pending; the job runs at what its slots and bounds allow.
	PendingNone PendingReason = ""
	// PendingCooldown: executing.cooldown-after-rescaling has not passed since the last
	// deployment (Until).
	PendingCooldown PendingReason = "COOLDOWN"
	// PendingStabilizing: the resources must stay as they are until Until (executing or
	// submission resource-stabilization-timeout).
	PendingStabilizing PendingReason = "STABILIZING"
	// PendingCheckpoint: the rescale happens at the next completed checkpoint (or after
	// rescale-trigger.max-delay / max-checkpoint-failures).
	PendingCheckpoint PendingReason = "WAITING_FOR_CHECKPOINT"
	// PendingMinIncrease: the gain is below min-parallelism-increase.
	PendingMinIncrease PendingReason = "MIN_PARALLELISM_INCREASE_NOT_MET"
	// PendingSlots: the lower bounds need MissingSlots more slots than there are.
	PendingSlots PendingReason = "SLOTS_MISSING"
	// PendingInFlight: a deployment waits (until Until at most) for workers on their way.
	PendingInFlight PendingReason = "RESOURCES_IN_FLIGHT"
	// PendingWarmup: the rescale waits (until Until at most) for warm-up copies of the
	// key-group ranges that move to catch up (state.warmup.timeout).
	PendingWarmup PendingReason = "WARMING_UP"
	// PendingRestarting: the job is restarting (cancelling the last attempt, backoff).
	PendingRestarting PendingReason = "RESTARTING"
)

// PendingRescale is the rescale the scheduler is waiting to make, and why it waits.
type PendingRescale struct {
	Reason  PendingReason
	Message string
	// Until is when the wait ends by itself (cooldown, stabilization, backoff); zero when
	// it waits for an event (a checkpoint, more slots).
	Until        time.Time
	MissingSlots int
	// InFlight: workers on their way (requested from the driver or expected by name).
	InFlight int
	// Target is the parallelism the rescale would deploy (nil when unknown).
	Target map[VertexID]int
}

// PendingRescale reports what the scheduler waits for before its next deployment.
func (s *Scheduler) PendingRescale() PendingRescale {
	var p PendingRescale
	switch st := s.state.(type) {
	case *executing:
		p = st.pending()
	case *waitingForResources:
		p = st.pending()
	case *restarting:
		p = PendingRescale{Reason: PendingRestarting, Message: "restarting: waiting for the last attempt's subtasks to stop"}
		if !st.backoffDone {
			p.Until = st.backoffUntil
			p.Message = "restarting: restart backoff until " + st.backoffUntil.UTC().Format(time.RFC3339Nano)
		}
	}
	if p.Reason != PendingNone {
		p.InFlight = s.inFlight()
	}
	return p
}

func (s *Scheduler) missingSlots() int {
	usable, _ := s.pool.Counts()
	return max(0, allocator.MinimumSlots(s.requirements())-usable)
}

// slotsPending is the pending rescale of a job whose lower bounds need more slots than
// it may use; msg says how many, and it names the blocked nodes whose free slots it may
// not use, so that an operator who blocked them sees why the job waits.
func (s *Scheduler) slotsPending(msg string) PendingRescale {
	n := s.missingSlots()
	p := PendingRescale{Reason: PendingSlots, MissingSlots: n, Message: fmt.Sprintf(msg, n)}
	if free, nodes := s.pool.BlockedFree(); free > 0 {
		p.Message += fmt.Sprintf("; %d free slot(s) sit on blocked node(s) %s until their block ends or is removed",
			free, strings.Join(nodes, ", "))
	}
	return p
}

func toVertexParallelism(p allocator.Parallelism) map[VertexID]int {
	if p == nil {
		return nil
	}
	out := make(map[VertexID]int, len(p))
	for k, v := range p {
		out[VertexID(k)] = v
	}
	return out
}

func (w *waitingForResources) pending() PendingRescale {
	s := w.s
	if !w.hasSufficientResources() {
		return s.slotsPending("waiting for resources: the lower bounds need %d more slot(s)")
	}
	usable, _ := s.pool.Counts()
	target, _ := allocator.DetermineParallelism(s.requirements(), usable)
	p := PendingRescale{Target: toVertexParallelism(target), Until: w.stm.stabilizeDue}
	if n := s.inFlight(); n > 0 {
		p.Reason = PendingInFlight
		p.Message = fmt.Sprintf("waiting for %d worker(s) on their way, at most until %s", n, w.stm.stabilizeDue.UTC().Format(time.RFC3339Nano))
		return p
	}
	p.Reason = PendingStabilizing
	p.Message = "waiting for more TaskManagers to register (submission resource-stabilization-timeout) until " + w.stm.stabilizeDue.UTC().Format(time.RFC3339Nano)
	return p
}

func (e *executing) pending() PendingRescale {
	s := e.s
	if e.warm != nil {
		return e.warmupPending()
	}
	target, ok, changed := e.candidate()
	if !ok {
		return s.slotsPending("the lower bounds need %d more slot(s) than the job may use")
	}
	if !changed {
		return PendingRescale{}
	}
	p := PendingRescale{Target: toVertexParallelism(maps.Clone(target))}
	if !e.hasSufficientResources() {
		g, _ := e.gain()
		p.Reason = PendingMinIncrease
		p.Message = fmt.Sprintf("the gain of %d is below min-parallelism-increase %d", g.increase, s.opts.MinParallelismIncrease)
		if !e.forceSince.IsZero() {
			p.Until = e.forceSince.Add(s.opts.ScalingIntervalMax)
			p.Message += "; forced at scaling-interval.max"
		}
		return p
	}
	switch e.stm.phase {
	case phaseCooldown:
		p.Reason, p.Until = PendingCooldown, e.stm.start.Add(s.opts.Cooldown)
		p.Message = "cooldown after the last rescale until " + p.Until.UTC().Format(time.RFC3339Nano)
	case phaseStabilizing:
		if !e.hasDesiredResources() {
			p.Reason, p.Until = PendingStabilizing, e.stm.stabilizeDue
			p.Message = "waiting for the resources to stabilize (executing resource-stabilization-timeout) until " + p.Until.UTC().Format(time.RFC3339Nano)
			return p
		}
		fallthrough
	default:
		p.Reason = PendingCheckpoint
		p.Message = "rescale at the next completed checkpoint"
	}
	return p
}
