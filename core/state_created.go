package core

import "time"

// created is the job before scheduling starts (INITIALIZING).
type created struct{ baseState }

func (*created) name() StateName               { return StateCreated }
func (*created) status() JobStatus             { return StatusInitializing }
func (*created) enter(time.Time)               {}
func (*created) onTimer(time.Time, timerEntry) {}

func (c *created) onStart(now time.Time) {
	s := c.s
	s.history.begin(now, TriggerInitialSchedule, "job started", StateCreated, nil, s.order)
	s.statusCause = "scheduling started"
	s.transitionTo(now, newWaitingForResources(s))
}

func (c *created) onCancel(now time.Time) {
	c.s.finish(now, StatusCanceled, "job cancelled before it was scheduled")
}

func (c *created) onSuspend(now time.Time, reason string) {
	c.s.finish(now, StatusSuspended, "job suspended: "+reason)
}

func (c *created) onGlobalFailure(now time.Time, cause string, _ bool) {
	c.s.finish(now, StatusFailed, cause)
}
