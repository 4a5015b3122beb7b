package api

import (
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strings"
)

// ErrorBody is Flink's error answer: {"errors": ["...", ...]}.
type ErrorBody struct {
	Errors []string `json:"errors"`
}

// UnreachableError means nothing answered at the client's address (or the connection
// broke before an answer arrived).
type UnreachableError struct {
	Address string
	Err     error
}

func (e *UnreachableError) Error() string {
	return fmt.Sprintf("no AM at %s: is it running? pass -m host:port or set TIDE_JOBMANAGER (%v)", e.Address, e.Err)
}

func (e *UnreachableError) Unwrap() error { return e.Err }

// StatusError is an answer of the AM other than 2xx.
type StatusError struct {
	Method, Path string
	Code         int
	// Messages are the entries of Flink's error body, or the body's text.
	Messages []string
}

func (e *StatusError) Error() string {
	msg := strings.Join(e.Messages, "; ")
	if msg == "" {
		msg = http.StatusText(e.Code)
	}
	hint := ""
	switch e.Code {
	case http.StatusUnauthorized, http.StatusForbidden:
		hint = " (pass --token or set TIDE_REST_TOKEN to the AM's rest.auth.token)"
	case http.StatusNotFound:
		if strings.HasPrefix(msg, "Not found") || strings.Contains(msg, "Unable to handle") {
			hint = " (is this a tide AM of a matching version?)"
		}
	}
	return fmt.Sprintf("%s %s: the AM answered %d: %s%s", e.Method, e.Path, e.Code, msg, hint)
}

// IsStatus reports whether err is a *StatusError with one of the codes.
func IsStatus(err error, codes ...int) bool {
	var se *StatusError
	if !errors.As(err, &se) {
		return false
	}
	for _, c := range codes {
		if se.Code == c {
			return true
		}
	}
	return false
}

// errorMessages reads Flink's error body, or returns the text as it is.
func errorMessages(data []byte) []string {
	var body ErrorBody
	if err := json.Unmarshal(data, &body); err == nil && len(body.Errors) > 0 {
		return body.Errors
	}
	if s := strings.TrimSpace(string(data)); s != "" {
		return []string{s}
	}
	return nil
}
