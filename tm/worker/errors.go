package worker

import "errors"

var (
	// ErrRejected: the AM refused the registration (another build, a blocked node, a
	// duplicate id); the TaskManager exits without retrying.
	ErrRejected = errors.New("AM rejected the TaskManager")
	// ErrAMUnreachable: the AM could not be reached within Config.ConnectTimeout.
	ErrAMUnreachable = errors.New("AM unreachable")
	// ErrUnknownJob: the AM runs a job this binary does not contain.
	ErrUnknownJob = errors.New("job not in this binary")
)
