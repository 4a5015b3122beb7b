package rest

import "net/http"

// getOverview serves GET /overview.
func (s *server) getOverview(w http.ResponseWriter, r *http.Request) {
	o, err := s.b.ClusterOverview(r.Context())
	answer(w, o, err)
}

// getConfig serves GET /config (the dashboard configuration).
func (s *server) getConfig(w http.ResponseWriter, _ *http.Request) {
	writeJSON(w, http.StatusOK, s.b.DashboardConfig())
}

// getJobManagerConfig serves GET /jobmanager/config: the configuration in force (live
// reloads included, secrets redacted) as Flink's list of {key, value}, sorted by key.
func (s *server) getJobManagerConfig(w http.ResponseWriter, _ *http.Request) {
	writeJSON(w, http.StatusOK, s.b.JobManagerConfig())
}
