package rest

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"

	"github.com/tidestream/tide/api"
)

// readBody reads a request body of at most MaxRequestBody bytes. On failure it has
// answered the request (413 for an oversize body) and returns false.
func readBody(w http.ResponseWriter, r *http.Request) ([]byte, bool) {
	body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, MaxRequestBody))
	var tooLarge *http.MaxBytesError
	switch {
	case errors.As(err, &tooLarge):
		writeError(w, http.StatusRequestEntityTooLarge, fmt.Sprintf("Request body of %s %s is larger than %d bytes", r.Method, r.URL.Path, tooLarge.Limit))
		return nil, false
	case err != nil:
		writeError(w, http.StatusBadRequest, fmt.Sprintf("Reading the request body of %s %s: %v", r.Method, r.URL.Path, err))
		return nil, false
	}
	return body, true
}

// decodeBody reads a JSON object into v, rejecting unknown fields and trailing data; an
// empty body leaves v as it is. On failure it has answered 400 (or 413) and returns false.
func decodeBody(w http.ResponseWriter, r *http.Request, v any) bool {
	body, ok := readBody(w, r)
	if !ok {
		return false
	}
	if err := decodeStrict(body, v); err != nil {
		writeError(w, http.StatusBadRequest, fmt.Sprintf("Invalid request body of %s %s: %v", r.Method, r.URL.Path, err))
		return false
	}
	return true
}

func decodeStrict(body []byte, v any) error {
	if len(strings.TrimSpace(string(body))) == 0 {
		return nil
	}
	dec := json.NewDecoder(strings.NewReader(string(body)))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		return err
	}
	if dec.More() {
		return errors.New("unexpected data after the JSON object")
	}
	return nil
}

func writeJSON(w http.ResponseWriter, code int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(code)
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	_ = enc.Encode(v)
}

// writeError answers with Flink's error body {"errors": [...]}.
func writeError(w http.ResponseWriter, code int, msg string) {
	writeErrors(w, code, []string{msg})
}

// writeErrors answers with every problem in Flink's error body.
func writeErrors(w http.ResponseWriter, code int, msgs []string) {
	writeJSON(w, code, api.ErrorBody{Errors: msgs})
}

// writeFailure answers a backend's error: its status and messages for an
// *api.StatusError, 500 otherwise.
func writeFailure(w http.ResponseWriter, err error) {
	var se *api.StatusError
	if errors.As(err, &se) {
		msgs := se.Messages
		if len(msgs) == 0 {
			msgs = []string{http.StatusText(se.Code)}
		}
		writeErrors(w, se.Code, msgs)
		return
	}
	writeError(w, http.StatusInternalServerError, err.Error())
}

// answer writes v with status 200, or the backend's error.
func answer(w http.ResponseWriter, v any, err error) {
	if err != nil {
		writeFailure(w, err)
		return
	}
	writeJSON(w, http.StatusOK, v)
}
