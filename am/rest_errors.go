package am

import (
	"errors"
	"fmt"
	"net/http"
	"time"

	"github.com/tidestream/tide/api"
)

// statusError is a failure the REST API answers with code and msgs.
func statusError(code int, msgs ...string) error {
	return &api.StatusError{Code: code, Messages: msgs}
}

func statusErrorf(code int, format string, args ...any) error {
	return statusError(code, fmt.Sprintf(format, args...))
}

// unavailable: the event loop did not answer in time (503).
func unavailable(err error) error {
	return statusError(http.StatusServiceUnavailable, err.Error())
}

// mutateError turns a failed mutate into its answer: 409 with terminated (what can no
// longer change) once the job has ended, 503 when the event loop did not answer in time.
func mutateError(err error, terminated string) error {
	switch {
	case err == nil:
		return nil
	case errors.Is(err, errJobTerminated):
		return statusError(http.StatusConflict, terminated)
	}
	return unavailable(err)
}

func millis(t time.Time) int64 {
	if t.IsZero() {
		return -1
	}
	return t.UnixMilli()
}

func displayName(name, id string) string {
	if name == "" {
		return id
	}
	return name
}
