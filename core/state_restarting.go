package core

import (
	"time"

	"github.com/tidestream/tide/core/allocator"
)

// restarting cancels the attempt and waits until every subtask has stopped (or its
// TaskManager is gone) and the backoff has passed, so the old slots are really free before
// the next plan (no restart loop on not-yet-freed slots). A forced restart (rescale,
// evacuation) goes straight back to Executing when the free slots still give the target
// parallelism and nothing is on its way; otherwise it goes through WaitingForResources,
// which waits (bounded) for what is on its way, so the job is not redeployed below it.
type restarting struct {
	baseState
	backoff      time.Duration
	backoffDone  bool
	backoffUntil time.Time
	forced       bool
	target       allocator.Parallelism
	// afterFailure: a task or global failure caused the restart (not a lost TaskManager or
	// a rescale): nothing suggests that resources are coming.
	afterFailure bool
	// lost: a lost TaskManager caused the restart in reactive mode; if standby copies
	// cover its ranges, the job redeploys at once (standby_takeover.go).
	lost bool
}

func newRestarting(s *Scheduler, backoff time.Duration, forced bool, target allocator.Parallelism) *restarting {
	return &restarting{baseState: baseState{s}, backoff: backoff, forced: forced, target: target}
}

func (*restarting) name() StateName   { return StateRestarting }
func (*restarting) status() JobStatus { return StatusRestarting }

func (r *restarting) enter(now time.Time) {
	r.s.endDeployment(now, "job restarting")
	if r.backoff > 0 {
		r.backoffUntil = now.Add(r.backoff)
		r.s.arm(now, timerRestartBackoff, r.backoff, 0)
	} else {
		r.backoffDone = true
	}
}

func (r *restarting) settle(now time.Time) { r.maybeProceed(now) }

func (r *restarting) maybeProceed(now time.Time) {
	s := r.s
	if !r.backoffDone || (s.dep != nil && s.dep.live > 0) {
		return
	}
	if r.peersSurvived(now) {
		return
	}
	s.releaseDeployment(now)
	if r.lost && !r.afterFailure && s.standbyTakeover(now) {
		return
	}
	if r.forced && r.target != nil && s.inFlight() == 0 {
		if plan, ok := s.planDeployment(); ok && plan.Parallelism.Equal(r.target) {
			if err := s.deploy(plan); err == nil {
				s.transitionTo(now, newExecuting(s))
				return
			}
		}
		s.log.Info("free slots no longer give the rescale target; waiting for resources", "target", r.target)
	}
	s.statusCause = "restarted: waiting for resources"
	w := newWaitingForResources(s)
	w.afterFailure = r.afterFailure
	s.transitionTo(now, w)
}

func (r *restarting) onTimer(now time.Time, t timerEntry) {
	if t.kind == timerRestartBackoff {
		r.backoffDone = true
		r.maybeProceed(now)
	}
}

func (r *restarting) onTasksChanged(now time.Time) { r.maybeProceed(now) }

func (r *restarting) onTaskFailed(now time.Time, _ string, _ bool, _ RescaleTrigger) {
	r.maybeProceed(now)
}

func (r *restarting) onCancel(now time.Time) {
	r.s.statusCause = "job cancelled"
	r.s.transitionTo(now, newCanceling(r.s))
}

func (r *restarting) onSuspend(now time.Time, reason string) {
	r.s.finish(now, StatusSuspended, "job suspended: "+reason)
}

func (r *restarting) onGlobalFailure(_ time.Time, cause string, _ bool) {
	r.s.log.Info("failure ignored while restarting", "cause", cause)
}
