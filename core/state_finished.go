package core

import "time"

// finished is the terminal state; it ignores everything.
type finished struct {
	baseState
	final JobStatus
	cause string
}

func (*finished) name() StateName     { return StateFinished }
func (f *finished) status() JobStatus { return f.final }

func (f *finished) enter(now time.Time) {
	s := f.s
	s.endDeployment(now, f.cause)
	s.releaseDeployment(now)
	outcome := RescaleFailed
	if f.final != StatusFailed {
		outcome = RescaleIgnored
	}
	if r, ok := s.history.finish(now, outcome, 0, nil, s.opts.RescaleHistorySize); ok {
		s.emit(RescaleRecorded{Rescale: r})
	}
	if s.declared != nil && (s.declared.Slots != 0 || s.declared.Unbounded) {
		d := DeclareResources{}
		s.declared = &d
		s.emit(d)
	}
	s.emit(JobTerminated{Status: f.final, Cause: f.cause})
	s.log.Info("job terminated", "status", f.final, "cause", f.cause)
}

func (*finished) onStart(time.Time)                       {}
func (*finished) onCancel(time.Time)                      {}
func (*finished) onSuspend(time.Time, string)             {}
func (*finished) onGlobalFailure(time.Time, string, bool) {}

// finish moves to Finished with a terminal job status.
func (s *Scheduler) finish(now time.Time, final JobStatus, cause string) {
	s.statusCause = cause
	s.transitionTo(now, &finished{baseState: baseState{s}, final: final, cause: cause})
}
