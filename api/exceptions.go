package api

import (
	"context"
	"net/http"
	"strconv"
)

// ExceptionEntry is one failure of GET /jobs/:jobid/exceptions.
type ExceptionEntry struct {
	ExceptionName        string            `json:"exceptionName"`
	Stacktrace           string            `json:"stacktrace"`
	Timestamp            int64             `json:"timestamp"`
	TaskName             *string           `json:"taskName"`
	Endpoint             *string           `json:"endpoint"`
	TaskManagerID        *string           `json:"taskManagerId"`
	Attempt              int64             `json:"attempt"`
	Unrecoverable        bool              `json:"unrecoverable"`
	FailureLabels        map[string]string `json:"failureLabels"`
	ConcurrentExceptions []ExceptionEntry  `json:"concurrentExceptions"`
}

// ExceptionHistory is the history of GET /jobs/:jobid/exceptions, newest first.
type ExceptionHistory struct {
	Entries   []ExceptionEntry `json:"entries"`
	Truncated bool             `json:"truncated"`
}

// JobExceptions is GET /jobs/:jobid/exceptions.
type JobExceptions struct {
	ExceptionHistory ExceptionHistory `json:"exceptionHistory"`
}

// Exceptions returns the job's newest failures, at most max of them (0: the AM's default).
func (c *Client) Exceptions(ctx context.Context, jobID string, max int) (ExceptionHistory, error) {
	path := jobPath(jobID, "/exceptions")
	if max > 0 {
		path += "?maxExceptions=" + strconv.Itoa(max)
	}
	var e JobExceptions
	err := c.do(ctx, http.MethodGet, path, nil, &e)
	return e.ExceptionHistory, err
}

// NewestException returns the newest entry of the job's exception history, whether there
// is one, and whether older ones exist. An AM without the endpoint (404, 405) has none.
func (c *Client) NewestException(ctx context.Context, jobID string) (e ExceptionEntry, ok, older bool, err error) {
	h, err := c.Exceptions(ctx, jobID, 1)
	if IsStatus(err, http.StatusNotFound, http.StatusMethodNotAllowed) {
		return ExceptionEntry{}, false, false, nil
	}
	if err != nil || len(h.Entries) == 0 {
		return ExceptionEntry{}, false, false, err
	}
	return h.Entries[0], true, h.Truncated, nil
}
