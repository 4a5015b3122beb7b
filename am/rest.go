package am

import (
	"encoding/json"
	"fmt"
	"net/http"
	"time"
)

// restHandler routes tide's REST API (Flink's paths and JSON field names). Each resource
// has its own rest_<resource>.go file.
func (a *AM) restHandler() http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("GET /overview", a.getOverview)
	mux.HandleFunc("GET /config", a.getConfig)
	mux.HandleFunc("GET /jobs", a.getJobs)
	mux.HandleFunc("GET /jobs/overview", a.getJobsOverview)
	mux.HandleFunc("GET /jobs/{jobid}", a.withJob(a.getJob))
	mux.HandleFunc("PATCH /jobs/{jobid}", a.withJob(a.patchJob))
	mux.HandleFunc("GET /jobs/{jobid}/status", a.withJob(a.getJobStatus))
	mux.HandleFunc("GET /jobs/{jobid}/rescales", a.withJob(a.getRescales))
	mux.HandleFunc("GET /jobs/{jobid}/checkpoints", a.withJob(a.getCheckpoints))
	mux.HandleFunc("GET /taskmanagers", a.getTaskManagers)
	mux.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {
		writeError(w, http.StatusNotFound, fmt.Sprintf("Not found: %s %s", r.Method, r.URL.Path))
	})
	return mux
}

// withJob answers 404 for any job id other than this AM's job.
func (a *AM) withJob(h http.HandlerFunc) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		if id := r.PathValue("jobid"); id != a.cfg.JobID {
			writeError(w, http.StatusNotFound, fmt.Sprintf("Job %s not found (this AM runs job %s)", id, a.cfg.JobID))
			return
		}
		h(w, r)
	}
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
	writeJSON(w, code, map[string][]string{"errors": {msg}})
}

func millis(t time.Time) int64 {
	if t.IsZero() {
		return -1
	}
	return t.UnixMilli()
}
