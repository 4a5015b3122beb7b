package core

import "time"

// failing cancels the attempt after a failure no restart can fix and finishes FAILED once
// every subtask has stopped.
type failing struct {
	baseState
	cause string
}

func newFailing(s *Scheduler, cause string) *failing { return &failing{baseState{s}, cause} }

func (*failing) name() StateName   { return StateFailing }
func (*failing) status() JobStatus { return StatusFailing }

func (f *failing) enter(now time.Time) {
	f.s.log.Warn("job failing", "cause", f.cause)
	f.s.endDeployment(now, "job failing: "+f.cause)
}

func (f *failing) settle(now time.Time) {
	if d := f.s.dep; d == nil || d.live == 0 {
		f.s.finish(now, StatusFailed, f.cause)
	}
}

func (f *failing) onTasksChanged(now time.Time) { f.settle(now) }

func (f *failing) onTaskFailed(now time.Time, _ string, _ bool, _ RescaleTrigger) { f.settle(now) }

func (f *failing) onCancel(now time.Time) {
	f.s.statusCause = "job cancelled"
	f.s.transitionTo(now, newCanceling(f.s))
}

func (f *failing) onSuspend(now time.Time, reason string) {
	f.s.finish(now, StatusSuspended, "job suspended: "+reason)
}

func (f *failing) onGlobalFailure(_ time.Time, cause string, _ bool) {
	f.s.log.Info("failure ignored while failing", "cause", cause)
}
