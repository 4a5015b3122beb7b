package tidecli

import (
	"fmt"
	"strings"

	"github.com/tidestream/tide/api"
)

// failureLine describes a failure in one line: when, which attempt, where (the subtask and
// its TaskManager; none for a failure of the whole job, such as a source coordinator's),
// whether the job can restart from it, and what happened.
func failureLine(e api.ExceptionEntry) string {
	where := []string{fmt.Sprintf("attempt %d", e.Attempt)}
	if e.TaskName != nil {
		where = append(where, "subtask "+*e.TaskName)
	}
	if e.TaskManagerID != nil {
		where = append(where, "on "+*e.TaskManagerID)
	}
	if e.Unrecoverable {
		where = append(where, "unrecoverable")
	}
	msg := strings.Join(strings.Fields(e.Stacktrace), " ")
	return fmt.Sprintf("%s (%s): %s", fmtMillis(e.Timestamp), strings.Join(where, ", "), msg)
}

// failureReporter gives the line tide run prints for a job's newest failure (whichever
// way it follows the job: local, YARN, Kubernetes), once per failure; a failure with the
// error of the one reported before it gets a short line instead of the same message again.
type failureReporter struct {
	last  failureKey // the failure reported last; zero: none yet
	error string     // its error
}

// failureKey tells failures of the exception history apart.
type failureKey struct {
	at      int64
	attempt int64
}

// line returns the line for e, or false when e was reported already.
func (r *failureReporter) line(e api.ExceptionEntry) (string, bool) {
	k := failureKey{at: e.Timestamp, attempt: e.Attempt}
	if k == r.last {
		return "", false
	}
	last, lastErr := r.last, r.error
	r.last, r.error = k, e.Stacktrace
	switch {
	case last == (failureKey{}) || lastErr != e.Stacktrace:
	case last.attempt == e.Attempt:
		return fmt.Sprintf("attempt %d failed again with the same error", e.Attempt), true
	default:
		return fmt.Sprintf("attempt %d failed with the same error as attempt %d", e.Attempt, last.attempt), true
	}
	return failureLine(e), true
}
