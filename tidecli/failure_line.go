package tidecli

import (
	"context"
	"fmt"
	"net/http"
	"strings"

	"github.com/tidestream/tide/api"
)

// newestFailure returns the newest entry of the job's exception history (GET
// /jobs/:jobid/exceptions), whether there is one, and whether older ones exist. An AM
// without the endpoint has none to show.
func newestFailure(ctx context.Context, c *api.Client, jobID string) (e api.ExceptionEntry, ok, more bool, err error) {
	h, err := c.Exceptions(ctx, jobID, 1)
	if api.IsStatus(err, http.StatusNotFound, http.StatusMethodNotAllowed) {
		return api.ExceptionEntry{}, false, false, nil
	}
	if err != nil || len(h.Entries) == 0 {
		return api.ExceptionEntry{}, false, false, err
	}
	return h.Entries[0], true, h.Truncated, nil
}

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
