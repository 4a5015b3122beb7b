package rest

import (
	"fmt"
	"net/http"
	"strconv"
	"strings"

	"github.com/tidestream/tide/api"
)

// getCheckpoints serves GET /jobs/:jobid/checkpoints (Flink's counts/latest/history; the
// statistics span every attempt, so they survive rescales).
func (s *server) getCheckpoints(w http.ResponseWriter, _ *http.Request) {
	writeJSON(w, http.StatusOK, s.b.Checkpoints())
}

// postCheckpoint serves POST /jobs/:jobid/checkpoints: it triggers a checkpoint now (or
// joins the one in flight) and answers 202 {"request-id"} for polling.
func (s *server) postCheckpoint(w http.ResponseWriter, r *http.Request) {
	var body api.CheckpointTriggerRequest
	if !decodeBody(w, r, &body) {
		return
	}
	switch strings.ToUpper(body.CheckpointType) {
	case "", "CONFIGURED", "FULL":
	default:
		writeError(w, http.StatusBadRequest, fmt.Sprintf("checkpointType %q: expected CONFIGURED or FULL (tide's checkpoints are always full)", body.CheckpointType))
		return
	}
	id, err := s.b.TriggerCheckpoint(r.Context(), body.TriggerID, r.RemoteAddr)
	triggered(w, id, err)
}

// triggered answers the start of an asynchronous operation: 202 {"request-id"}.
func triggered(w http.ResponseWriter, id string, err error) {
	if err != nil {
		writeFailure(w, err)
		return
	}
	writeJSON(w, http.StatusAccepted, api.TriggerResponse{RequestID: id})
}

// getCheckpointConfig serves GET /jobs/:jobid/checkpoints/config (the settings in force,
// reloads included).
func (s *server) getCheckpointConfig(w http.ResponseWriter, r *http.Request) {
	c, err := s.b.CheckpointConfig(r.Context())
	answer(w, c, err)
}

// getCheckpointDetails serves GET /jobs/:jobid/checkpoints/details/:checkpointid from the
// statistics' history.
func (s *server) getCheckpointDetails(w http.ResponseWriter, r *http.Request) {
	raw := r.PathValue("checkpointid")
	id, err := strconv.ParseInt(raw, 10, 64)
	if err != nil || id < 1 {
		writeError(w, http.StatusBadRequest, fmt.Sprintf("checkpoint id %q: expected an integer ≥ 1", raw))
		return
	}
	c, err := s.b.Checkpoint(id)
	answer(w, c, err)
}

// getCheckpointTrigger serves GET /jobs/:jobid/checkpoints/:triggerid.
func (s *server) getCheckpointTrigger(w http.ResponseWriter, r *http.Request) {
	op, err := s.b.CheckpointOperation(r.PathValue("triggerid"))
	answer(w, op, err)
}
