package core

import "time"

// canceling cancels the attempt and finishes CANCELED once every subtask has stopped.
type canceling struct{ baseState }

func newCanceling(s *Scheduler) *canceling { return &canceling{baseState{s}} }

func (*canceling) name() StateName   { return StateCanceling }
func (*canceling) status() JobStatus { return StatusCancelling }

func (c *canceling) enter(now time.Time) { c.s.endDeployment(now, "job cancelled") }

func (c *canceling) settle(now time.Time) {
	if d := c.s.dep; d == nil || d.live == 0 {
		c.s.finish(now, StatusCanceled, "job cancelled")
	}
}

func (c *canceling) onTasksChanged(now time.Time) { c.settle(now) }

func (c *canceling) onTaskFailed(now time.Time, _ string, _ bool, _ RescaleTrigger) { c.settle(now) }

func (*canceling) onCancel(time.Time) {}

func (c *canceling) onSuspend(now time.Time, reason string) {
	c.s.finish(now, StatusSuspended, "job suspended: "+reason)
}

func (c *canceling) onGlobalFailure(_ time.Time, cause string, _ bool) {
	c.s.log.Info("failure ignored while cancelling", "cause", cause)
}
