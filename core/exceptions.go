package core

import (
	"slices"
	"time"
)

// ExceptionEntry is one failure in the job's exception history (REST /jobs/:id/exceptions).
type ExceptionEntry struct {
	Time          time.Time
	Attempt       AttemptID
	Subtask       string // empty for global failures
	TaskManager   TaskManagerID
	Error         string
	Unrecoverable bool
}

// addException appends to the bounded exception history.
func (s *Scheduler) addException(e ExceptionEntry) {
	s.exceptions = append(s.exceptions, e)
	if over := len(s.exceptions) - s.opts.ExceptionHistorySize; over > 0 {
		s.exceptions = slices.Delete(s.exceptions, 0, over)
	}
}
