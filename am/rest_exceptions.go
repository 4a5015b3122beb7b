package am

import (
	"context"

	"github.com/tidestream/tide/api"
	"github.com/tidestream/tide/core"
)

// Exceptions is GET /jobs/:jobid/exceptions: the exception history, newest first,
// truncated to limit entries.
func (a *AM) Exceptions(ctx context.Context, limit int) (api.JobExceptions, error) {
	var history []core.ExceptionEntry
	if err := a.inspect(ctx, func() { history = a.sched.Exceptions() }); err != nil {
		return api.JobExceptions{}, unavailable(err)
	}
	entries := []api.ExceptionEntry{}
	for i := len(history) - 1; i >= 0 && len(entries) < limit; i-- {
		entries = append(entries, exceptionJSON(history[i]))
	}
	return api.JobExceptions{ExceptionHistory: api.ExceptionHistory{Entries: entries, Truncated: len(history) > limit}}, nil
}

func exceptionJSON(e core.ExceptionEntry) api.ExceptionEntry {
	out := api.ExceptionEntry{ExceptionName: "tide.TaskFailure", Stacktrace: e.Error, Timestamp: e.Time.UnixMilli(),
		Attempt: int64(e.Attempt), Unrecoverable: e.Unrecoverable, FailureLabels: map[string]string{},
		ConcurrentExceptions: []api.ExceptionEntry{}}
	if e.Subtask == "" {
		out.ExceptionName = "tide.GlobalFailure"
	} else {
		task := e.Subtask
		out.TaskName = &task
	}
	if e.TaskManager != "" {
		tm := string(e.TaskManager)
		out.TaskManagerID, out.Endpoint = &tm, &tm
	}
	return out
}
