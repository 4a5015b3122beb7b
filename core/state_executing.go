package core

import (
	"fmt"
	"time"

	"github.com/tidestream/tide/core/allocator"
)

// executing runs an attempt (RUNNING). Its transition manager turns resource changes
// into rescales (cooldown, stabilization, min-parallelism-increase, rescale on
// checkpoint); failures go to Restarting or Failing as the restart strategy says.
type executing struct {
	baseState
	stm                *transitionManager
	changeTrigger      RescaleTrigger
	checkpointFailures int
	forceSince         time.Time
}

func newExecuting(s *Scheduler) *executing {
	return &executing{baseState: baseState{s}, changeTrigger: TriggerNewResourceAvailable}
}

func (*executing) name() StateName   { return StateExecuting }
func (*executing) status() JobStatus { return StatusRunning }

func (e *executing) enter(now time.Time) {
	s := e.s
	after := s.dep.parallelism
	if r, ok := s.history.finish(now, RescaleCompleted, s.dep.attempt, after, s.opts.RescaleHistorySize); ok {
		changed := false
		for _, v := range r.Vertices {
			changed = changed || (v.Before != 0 && v.Before != v.After)
		}
		switch {
		case changed:
			s.metrics.NumRescales++
		case r.Trigger == TriggerNewResourceAvailable || r.Trigger == TriggerUpdateRequirement:
			// The resources that prompted it were gone by the time of the plan.
			r = s.history.markIgnored(r.ID)
		}
		s.emit(RescaleRecorded{Rescale: r})
	}
	s.log.Info("attempt deployed", "attempt", s.dep.attempt, "parallelism", after, "restore_from", s.latestCheckpoint)
	e.stm = newTransitionManager(s, e, now, func() stmParams {
		p := stmParams{cooldown: s.opts.Cooldown, stabilization: s.opts.ExecutingStabilization}
		if s.opts.RescaleOnCheckpoint {
			p.maxTriggerDelay = s.opts.MaxTriggerDelay
			p.noTimedTrigger = s.opts.MaxTriggerDelay <= 0
		}
		return p
	})
}

// settle picks up resources that arrived while the job was restarting.
func (e *executing) settle(now time.Time) { e.onResourcesChanged(now, TriggerNewResourceAvailable) }

// candidate is the parallelism all usable slots allow; changed says whether it differs
// from the running attempt's.
func (e *executing) candidate() (p allocator.Parallelism, ok, changed bool) {
	usable, _ := e.s.pool.Counts()
	p, ok = allocator.DetermineParallelism(e.s.requirements(), usable)
	if !ok {
		return nil, false, false
	}
	for id, n := range p {
		if e.s.dep.parallelism[VertexID(id)] != n {
			return p, true, true
		}
	}
	return p, true, false
}

func (e *executing) hasDesiredResources() bool {
	_, ok, changed := e.candidate()
	usable, _ := e.s.pool.Counts()
	return ok && changed && usable >= e.s.requiredSlots()
}

// hasSufficientResources: the parallelism changed and the change is worth a restart: any
// vertex goes down, the total goes up by at least min-parallelism-increase, or the job
// reaches its desired parallelism.
func (e *executing) hasSufficientResources() bool {
	p, ok, changed := e.candidate()
	if !ok || !changed {
		return false
	}
	increase := 0
	for id, n := range p {
		cur := e.s.dep.parallelism[VertexID(id)]
		if n < cur {
			return true
		}
		increase += n - cur
	}
	return increase >= e.s.opts.MinParallelismIncrease || e.hasDesiredResources()
}

func (e *executing) transitionToSubsequentState(now time.Time) {
	s := e.s
	target, ok, changed := e.candidate()
	if !ok || !changed {
		e.stm.reset()
		return
	}
	s.metrics.NumRestarts++
	s.history.begin(now, e.changeTrigger, "rescale to "+formatParallelism(s.order, target), StateExecuting, s.dep.parallelism, s.order)
	s.statusCause = "rescaling"
	s.transitionTo(now, newRestarting(s, 0, true, target))
}

func (e *executing) onResourcesChanged(now time.Time, trigger RescaleTrigger) {
	e.changeTrigger = trigger
	e.stm.onChange(now)
	if e.s.state == e {
		e.checkForcedRescale(now)
	}
}

// checkForcedRescale arms scaling-interval.max for a change that does not meet
// min-parallelism-increase.
func (e *executing) checkForcedRescale(now time.Time) {
	if e.s.opts.ScalingIntervalMax <= 0 {
		return
	}
	_, ok, changed := e.candidate()
	if !ok || !changed {
		e.forceSince = time.Time{}
		return
	}
	if e.forceSince.IsZero() && !e.hasSufficientResources() {
		e.forceSince = now
		e.s.arm(now, timerScalingIntervalMax, e.s.opts.ScalingIntervalMax, 0)
	}
}

func (e *executing) onTimer(now time.Time, t timerEntry) {
	if e.stm.onTimer(now, t) || t.kind != timerScalingIntervalMax {
		return
	}
	e.forceSince = time.Time{}
	if _, ok, changed := e.candidate(); !ok || !changed {
		return
	}
	if e.stm.phase == phaseCooldown {
		e.forceSince = now
		e.s.arm(now, timerScalingIntervalMax, e.stm.start.Add(e.s.opts.Cooldown).Sub(now), 0)
		return
	}
	e.s.log.Info("forcing rescale after scaling-interval.max", "interval", e.s.opts.ScalingIntervalMax)
	e.stm.transition(now)
}

func (e *executing) onCheckpoint(now time.Time, completed bool) {
	if completed {
		e.checkpointFailures = 0
		e.stm.onTrigger(now)
		return
	}
	e.checkpointFailures++
	if e.checkpointFailures >= e.s.opts.MaxCheckpointFailures {
		e.checkpointFailures = 0
		e.stm.onTrigger(now)
	}
}

func (e *executing) onTasksChanged(now time.Time) {
	if d := e.s.dep; d.finished == len(d.tasks) {
		e.s.finish(now, StatusFinished, "all subtasks finished")
	}
}

func (e *executing) onTaskFailed(now time.Time, cause string, unrecoverable bool, trigger RescaleTrigger) {
	s := e.s
	if trigger == TriggerBlocklistEvacuation {
		target, _, _ := e.candidate()
		s.metrics.NumRestarts++
		s.history.begin(now, trigger, cause, StateExecuting, s.dep.parallelism, s.order)
		s.statusCause = cause
		s.transitionTo(now, newRestarting(s, 0, true, target))
		return
	}
	if unrecoverable {
		s.statusCause = cause
		s.transitionTo(now, newFailing(s, "unrecoverable failure: "+cause))
		return
	}
	s.restart.NotifyFailure(now)
	if !s.restart.CanRestart() {
		s.statusCause = cause
		s.transitionTo(now, newFailing(s, fmt.Sprintf("restart strategy %s does not allow another restart: %s", s.restart.Name(), cause)))
		return
	}
	s.metrics.NumRestarts++
	s.history.begin(now, trigger, cause, StateExecuting, s.dep.parallelism, s.order)
	s.statusCause = cause
	s.transitionTo(now, newRestarting(s, s.restart.Backoff(), false, nil))
}

func (e *executing) onGlobalFailure(now time.Time, cause string, unrecoverable bool) {
	e.onTaskFailed(now, cause, unrecoverable, TriggerRecoverableFailover)
}

func (e *executing) onCancel(now time.Time) {
	e.s.statusCause = "job cancelled"
	e.s.transitionTo(now, newCanceling(e.s))
}

func (e *executing) onSuspend(now time.Time, reason string) {
	e.s.finish(now, StatusSuspended, "job suspended: "+reason)
}

func formatParallelism(order []VertexID, p allocator.Parallelism) string {
	out := ""
	for i, v := range order {
		if i > 0 {
			out += " "
		}
		out += fmt.Sprintf("%s=%d", v, p[string(v)])
	}
	return out
}
