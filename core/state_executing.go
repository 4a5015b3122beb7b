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
	// owed: workers that were on their way when this attempt was deployed (the deployment
	// could not wait any longer for them); regAtEnter: registrations counted then. A
	// registration after the deployment while something was owed ends the cooldown.
	owed       int
	regAtEnter int
	// requested: the user changed the requirements (REST/CLI) while this attempt ran; a
	// change the slots allow is then rescaled to at the next trigger, as desired resources
	// are, without waiting out the executing stabilization timeout.
	requested bool
	executingWarmup
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
	s.planStandbys()
	e.owed, e.regAtEnter = s.inFlight(), s.registrations
	s.log.Info("attempt deployed", "attempt", s.dep.attempt, "parallelism", after, "restore_from", s.latestCheckpoint, "in_flight", e.owed)
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

// hasDesiredResources: the slots give the desired parallelism, or they give a change the
// user asked for.
func (e *executing) hasDesiredResources() bool {
	_, ok, changed := e.candidate()
	usable, _ := e.s.pool.Counts()
	return ok && changed && (usable >= e.s.requiredSlots() || e.requested)
}

func (e *executing) cooldownWaived() bool {
	return e.owed > 0 && e.s.registrations > e.regAtEnter
}

// hasSufficientResources: the parallelism changed and the change is worth a restart: any
// vertex goes down, a vertex below its required lower bound comes up (min-parallelism-
// increase never keeps a job below its bounds), the total goes up by at least
// min-parallelism-increase, or the job reaches its desired parallelism.
func (e *executing) hasSufficientResources() bool {
	gain, ok := e.gain()
	if !ok {
		return false
	}
	return gain.decrease || gain.belowLower || gain.increase >= e.s.opts.MinParallelismIncrease || e.hasDesiredResources()
}

// parallelismGain is how a candidate parallelism differs from the running one.
type parallelismGain struct {
	increase   int  // total increase over the vertices that go up
	decrease   bool // some vertex goes down
	belowLower bool // some vertex runs below its lower bound and the candidate raises it
}

// gain compares the candidate with the running attempt; ok is false when there is no
// candidate or it equals the running parallelism.
func (e *executing) gain() (parallelismGain, bool) {
	p, ok, changed := e.candidate()
	if !ok || !changed {
		return parallelismGain{}, false
	}
	var g parallelismGain
	for _, v := range e.s.vertices {
		n, cur := p[string(v.id)], e.s.dep.parallelism[v.id]
		switch {
		case n < cur:
			g.decrease = true
		case n > cur:
			g.increase += n - cur
			g.belowLower = g.belowLower || cur < v.lower
		}
	}
	return g, true
}

func (e *executing) transitionToSubsequentState(now time.Time) {
	s := e.s
	target, ok, changed := e.candidate()
	if !ok || !changed {
		e.stm.reset()
		return
	}
	if e.startWarmup(now, target, e.changeTrigger, "rescale to "+formatParallelism(s.order, target), nil) {
		return
	}
	s.metrics.NumRestarts++
	s.history.begin(now, e.changeTrigger, "rescale to "+formatParallelism(s.order, target), StateExecuting, s.dep.parallelism, s.order)
	s.statusCause = "rescaling"
	s.transitionTo(now, newRestarting(s, 0, true, target))
}

func (e *executing) onResourcesChanged(now time.Time, trigger RescaleTrigger) {
	e.changeTrigger = trigger
	if trigger == TriggerUpdateRequirement {
		e.requested = true
	}
	s := e.s
	if s.opts.NumStandbyReplicas > 0 || s.standby != nil {
		s.planStandbys()
	}
	if e.warm != nil {
		e.rewarm(now)
		return
	}
	e.stm.onChange(now)
	if s.state == e {
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
	if t.kind == timerWarmup {
		if e.warm != nil && t.id == e.warmTimer {
			e.switchNow(now, reasonWarmupTimeout)
		}
		return
	}
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
		if e.warm != nil {
			e.warmupCheckpoint(now)
			return
		}
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
		// The target is what the slots off blocked nodes give: the evacuated subtasks'
		// slots, still reserved now, count as usable until they stop, and a target
		// counting them would never match the plan (the restart then waited out the
		// submission stabilization for nothing).
		target, _ := allocator.DetermineParallelism(s.requirements(), s.pool.UnblockedSlots())
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
	if trigger == TriggerResourceLost && s.opts.Reactive {
		// Reactive mode: a lost TaskManager changes the resources, it is not a failure of
		// the job. No backoff and the restart strategy is not charged: the job restarts
		// through WaitingForResources, which redeploys on what is left as soon as the
		// resources are known (waiting, bounded, for a replacement on its way).
		s.metrics.NumRestarts++
		s.history.begin(now, trigger, cause, StateExecuting, s.dep.parallelism, s.order)
		s.statusCause = cause
		r := newRestarting(s, 0, false, nil)
		r.lost = true
		s.transitionTo(now, r)
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
	r := newRestarting(s, s.restart.Backoff(), false, nil)
	r.afterFailure = trigger == TriggerRecoverableFailover
	s.transitionTo(now, r)
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
