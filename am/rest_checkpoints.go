package am

import "net/http"

// getCheckpoints serves GET /jobs/:jobid/checkpoints (Flink's counts/latest/history).
func (a *AM) getCheckpoints(w http.ResponseWriter, _ *http.Request) {
	writeJSON(w, http.StatusOK, a.view.snapshot().Checkpoints)
}
