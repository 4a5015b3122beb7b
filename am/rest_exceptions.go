package am

import (
	"fmt"
	"net/http"
	"strconv"

	"github.com/tidestream/tide/core"
)

// defaultExceptionsMax is how many entries GET /jobs/:jobid/exceptions returns unless
// maxExceptions says otherwise (Flink's default).
const defaultExceptionsMax = 20

type exceptionEntry struct {
	ExceptionName        string            `json:"exceptionName"`
	Stacktrace           string            `json:"stacktrace"`
	Timestamp            int64             `json:"timestamp"`
	TaskName             *string           `json:"taskName"`
	Endpoint             *string           `json:"endpoint"`
	TaskManagerID        *string           `json:"taskManagerId"`
	Attempt              int64             `json:"attempt"`
	Unrecoverable        bool              `json:"unrecoverable"`
	FailureLabels        map[string]string `json:"failureLabels"`
	ConcurrentExceptions []exceptionEntry  `json:"concurrentExceptions"`
}

// getExceptions serves GET /jobs/:jobid/exceptions?maxExceptions=n: the exception
// history, newest first, truncated to n entries.
func (a *AM) getExceptions(w http.ResponseWriter, r *http.Request) {
	limit := defaultExceptionsMax
	if s := r.URL.Query().Get("maxExceptions"); s != "" {
		n, err := strconv.Atoi(s)
		if err != nil || n < 1 {
			writeError(w, http.StatusBadRequest, fmt.Sprintf("maxExceptions %q: expected an integer ≥ 1", s))
			return
		}
		limit = n
	}
	var history []core.ExceptionEntry
	if err := a.inspect(r.Context(), func() { history = a.sched.Exceptions() }); err != nil {
		writeError(w, http.StatusServiceUnavailable, err.Error())
		return
	}
	entries := []exceptionEntry{}
	for i := len(history) - 1; i >= 0 && len(entries) < limit; i-- {
		entries = append(entries, exceptionJSON(history[i]))
	}
	writeJSON(w, http.StatusOK, map[string]any{"exceptionHistory": map[string]any{
		"entries": entries, "truncated": len(history) > limit}})
}

func exceptionJSON(e core.ExceptionEntry) exceptionEntry {
	out := exceptionEntry{ExceptionName: "tide.TaskFailure", Stacktrace: e.Error, Timestamp: e.Time.UnixMilli(),
		Attempt: int64(e.Attempt), Unrecoverable: e.Unrecoverable, FailureLabels: map[string]string{},
		ConcurrentExceptions: []exceptionEntry{}}
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
