package rest

import (
	"net/http"

	"github.com/tidestream/tide/api"
)

// postSavepoint serves POST /jobs/:jobid/savepoints. A savepoint is a checkpoint taken now
// and copied, _metadata last, into its own directory under target-directory (or
// state.savepoints.dir); with cancel-job the job is cancelled once the copy is complete.
func (s *server) postSavepoint(w http.ResponseWriter, r *http.Request) {
	var body api.SavepointTriggerRequest
	if !decodeBody(w, r, &body) {
		return
	}
	id, err := s.b.TriggerSavepoint(r.Context(), body.TargetDirectory, body.FormatType, body.TriggerID, body.CancelJob, r.RemoteAddr)
	triggered(w, id, err)
}

// postStop serves POST /jobs/:jobid/stop: a savepoint, then the job is cancelled.
func (s *server) postStop(w http.ResponseWriter, r *http.Request) {
	var body api.StopRequest
	if !decodeBody(w, r, &body) {
		return
	}
	if body.Drain {
		writeError(w, http.StatusBadRequest, "drain: tide's sources are unbounded streams that cannot be drained; omit drain or set it to false")
		return
	}
	id, err := s.b.TriggerSavepoint(r.Context(), body.TargetDirectory, body.FormatType, body.TriggerID, true, r.RemoteAddr)
	triggered(w, id, err)
}

// getSavepointTrigger serves GET /jobs/:jobid/savepoints/:triggerid (and the status of a
// stop, which Flink polls under the same path).
func (s *server) getSavepointTrigger(w http.ResponseWriter, r *http.Request) {
	op, err := s.b.SavepointOperation(r.PathValue("triggerid"))
	answer(w, op, err)
}
