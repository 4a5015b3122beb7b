package core

import (
	"fmt"
	"time"

	"github.com/tidestream/tide/core/allocator"
)

// waitingForResources waits until the slots are desired, or sufficient and stable for the
// submission stabilization timeout, then plans on the free slots and deploys (Flink's
// CreatingExecutionGraph folds into that step). If the plan's slots vanished it stays
// here and waits for the next change: it never loops.
type waitingForResources struct {
	baseState
	stm *transitionManager
	// afterFailure: entered after a task failure; with nothing on its way and no
	// TaskManager registered within the stabilization window, there is no burst to absorb.
	afterFailure bool
}

func newWaitingForResources(s *Scheduler) *waitingForResources {
	return &waitingForResources{baseState: baseState{s}}
}

func (*waitingForResources) name() StateName   { return StateWaitingForResources }
func (*waitingForResources) status() JobStatus { return StatusCreated }

func (w *waitingForResources) enter(now time.Time) {
	s := w.s
	w.stm = newTransitionManager(s, w, now, func() stmParams {
		return stmParams{stabilization: s.opts.SubmissionStabilization}
	})
}

func (w *waitingForResources) settle(now time.Time) {
	s := w.s
	if s.adoptionOpen() {
		// After an AM failover: the TaskManagers report what they kept running; nothing
		// is deployed until that deployment is adopted or given up (bounded).
		s.declareResources(now)
		s.arm(now, timerAdoption, s.opts.AdoptTimeout, 0)
		w.adoptionChanged(now)
		return
	}
	w.settleResources(now)
}

// adoptionChanged decides a pending adoption if it can; after a fallback the state waits
// for resources as usual.
func (w *waitingForResources) adoptionChanged(now time.Time) {
	if w.s.tryAdopt(now) && w.s.state == w {
		w.settleResources(now)
	}
}

// settleResources starts the wait for resources: fail at once when the lower bounds can
// never be met, otherwise plan as soon as resources allow, bounded by the resource wait
// timeout.
func (w *waitingForResources) settleResources(now time.Time) {
	s := w.s
	if aw := s.opts.ActiveWorkers; aw.Enabled && aw.MaxWorkers > 0 {
		if need, most := allocator.MinimumSlots(s.requirements()), aw.MaxWorkers*aw.SlotsPerWorker; need > most {
			s.finish(now, StatusFailed, fmt.Sprintf("not enough resources available for scheduling: the lower bounds need %d slots, at most %d workers × %d slots can be started", need, aw.MaxWorkers, aw.SlotsPerWorker))
			return
		}
	}
	s.declareResources(now)
	w.stm.onChange(now)
	switch t := s.opts.ResourceWaitTimeout; {
	case s.state != w:
	case t == 0:
		w.onResourceTimeout(now)
	case t > 0:
		s.arm(now, timerResourceWait, t, 0)
	}
}

// hasDesiredResources: every slot the job wants is there, or the resources are sufficient
// and waiting out the stabilization window would gain nothing: everything the scheduler
// knows to be on its way has registered, or (after a task failure) nothing is on its way
// and no TaskManager registered within the window.
func (w *waitingForResources) hasDesiredResources() bool {
	usable, _ := w.s.pool.Counts()
	if usable >= w.s.requiredSlots() {
		return true
	}
	s := w.s
	quiet := w.afterFailure && s.inFlight() == 0 && !s.now.Before(s.lastRegistered.Add(s.opts.SubmissionStabilization))
	return (s.allArrived() || quiet) && w.hasSufficientResources()
}

func (*waitingForResources) cooldownWaived() bool { return false }

func (w *waitingForResources) hasSufficientResources() bool {
	usable, _ := w.s.pool.Counts()
	_, ok := allocator.DetermineParallelism(w.s.requirements(), usable)
	return ok
}

func (w *waitingForResources) transitionToSubsequentState(now time.Time) {
	if !w.s.tryExecute(now) {
		w.stm.reset()
	}
}

func (w *waitingForResources) onResourceTimeout(now time.Time) {
	s := w.s
	if s.tryExecute(now) {
		return
	}
	usable, free := s.pool.Counts()
	s.finish(now, StatusFailed, fmt.Sprintf("not enough resources available for scheduling: need %d slots for the lower bounds, have %d (%d free) after waiting %v",
		allocator.MinimumSlots(s.requirements()), usable, free, s.opts.ResourceWaitTimeout))
}

func (w *waitingForResources) onResourcesChanged(now time.Time, _ RescaleTrigger) {
	if w.s.adoptionOpen() {
		w.adoptionChanged(now)
		return
	}
	w.s.declareResources(now)
	w.stm.onChange(now)
}

func (w *waitingForResources) onTimer(now time.Time, t timerEntry) {
	if w.stm.onTimer(now, t) {
		return
	}
	switch {
	case t.kind == timerAdoption && w.s.adoptionOpen():
		a := w.s.adopt
		w.s.adoptionFallback(now, fmt.Sprintf("%d of %d subtasks reported within %v; missing %s",
			len(a.reports), a.total, w.s.opts.AdoptTimeout, a.missingReports(w.s.order, 5)))
		w.settleResources(now)
	case t.kind == timerResourceWait:
		w.onResourceTimeout(now)
	}
}

func (w *waitingForResources) onCancel(now time.Time) {
	w.s.finish(now, StatusCanceled, "job cancelled while waiting for resources")
}

func (w *waitingForResources) onSuspend(now time.Time, reason string) {
	w.s.finish(now, StatusSuspended, "job suspended: "+reason)
}

func (w *waitingForResources) onGlobalFailure(now time.Time, cause string, _ bool) {
	w.s.finish(now, StatusFailed, cause)
}

// tryExecute plans on the free slots, reserves them and moves to Executing. It reports
// false, with nothing changed, when the free slots are insufficient or vanished.
func (s *Scheduler) tryExecute(now time.Time) bool {
	plan, ok := s.planDeployment()
	if !ok {
		s.log.Info("free slots insufficient for a plan", "state", s.state.name())
		return false
	}
	if err := s.deploy(plan); err != nil {
		s.log.Warn("planned slots vanished before reservation", "state", s.state.name(), "err", err)
		return false
	}
	s.transitionTo(now, newExecuting(s))
	return true
}
