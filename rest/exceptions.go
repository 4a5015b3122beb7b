package rest

import (
	"fmt"
	"net/http"
	"strconv"
)

// defaultExceptionsMax is how many exceptions GET /jobs/:jobid/exceptions returns
// without maxExceptions.
const defaultExceptionsMax = 20

// getExceptions serves GET /jobs/:jobid/exceptions?maxExceptions=n: the exception
// history, newest first, truncated to n entries.
func (s *server) getExceptions(w http.ResponseWriter, r *http.Request) {
	limit := defaultExceptionsMax
	if v := r.URL.Query().Get("maxExceptions"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 1 {
			writeError(w, http.StatusBadRequest, fmt.Sprintf("maxExceptions %q: expected an integer ≥ 1", v))
			return
		}
		limit = n
	}
	e, err := s.b.Exceptions(r.Context(), limit)
	answer(w, e, err)
}
