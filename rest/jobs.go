package rest

import (
	"net/http"
	"strings"

	"github.com/tidestream/tide/api"
)

// getJobs serves GET /jobs.
func (s *server) getJobs(w http.ResponseWriter, _ *http.Request) {
	o := s.b.JobOverview()
	writeJSON(w, http.StatusOK, api.JobIDsStatus{Jobs: []api.JobIDStatus{{ID: o.JID, Status: o.State}}})
}

// getJobsOverview serves GET /jobs/overview.
func (s *server) getJobsOverview(w http.ResponseWriter, _ *http.Request) {
	writeJSON(w, http.StatusOK, api.JobsOverview{Jobs: []api.JobOverview{s.b.JobOverview()}})
}

// getJob serves GET /jobs/:jobid.
func (s *server) getJob(w http.ResponseWriter, r *http.Request) {
	d, err := s.b.JobDetails(r.Context())
	answer(w, d, err)
}

// getJobStatus serves GET /jobs/:jobid/status.
func (s *server) getJobStatus(w http.ResponseWriter, _ *http.Request) {
	writeJSON(w, http.StatusOK, api.JobStatus{Status: s.b.JobOverview().State})
}

// patchJob serves PATCH /jobs/:jobid?mode=cancel (Flink's "terminate job").
func (s *server) patchJob(w http.ResponseWriter, r *http.Request) {
	mode := r.URL.Query().Get("mode")
	if mode == "" {
		mode = "cancel"
	}
	if !strings.EqualFold(mode, "cancel") {
		writeError(w, http.StatusBadRequest, "Invalid mode "+mode+": expected cancel")
		return
	}
	if err := s.b.CancelJob(r.Context(), r.RemoteAddr); err != nil {
		writeFailure(w, err)
		return
	}
	writeJSON(w, http.StatusAccepted, map[string]any{})
}

// getPlan serves GET /jobs/:jobid/plan: the job graph with the parallelism each vertex
// runs at now, regenerated on every request so that it follows rescales (FLINK-22243).
func (s *server) getPlan(w http.ResponseWriter, r *http.Request) {
	p, err := s.b.JobPlan(r.Context())
	answer(w, p, err)
}

// getRescales serves GET /jobs/:jobid/rescales: the rescale history, oldest first, and
// the rescale under way ("current", null when none).
func (s *server) getRescales(w http.ResponseWriter, r *http.Request) {
	rs, err := s.b.Rescales(r.Context())
	answer(w, rs, err)
}
