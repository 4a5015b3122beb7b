package am

import (
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/tidestream/tide/core/checkpoint"
)

// errCheckpointRefused: a checkpoint cannot be triggered in the job's current state (409).
var errCheckpointRefused = errors.New("checkpoint refused")

// getCheckpoints serves GET /jobs/:jobid/checkpoints (Flink's counts/latest/history; the
// statistics span every attempt, so they survive rescales).
func (a *AM) getCheckpoints(w http.ResponseWriter, _ *http.Request) {
	a.resolveOperations()
	writeJSON(w, http.StatusOK, a.view.snapshot().Checkpoints)
}

type checkpointTriggerBody struct {
	CheckpointType string `json:"checkpointType"`
	TriggerID      string `json:"triggerId"`
}

// postCheckpoint serves POST /jobs/:jobid/checkpoints: it triggers a checkpoint now (or
// joins the one in flight) and answers {"request-id"} for polling.
func (a *AM) postCheckpoint(w http.ResponseWriter, r *http.Request) {
	var body checkpointTriggerBody
	if !decodeBody(w, r, &body) {
		return
	}
	switch strings.ToUpper(body.CheckpointType) {
	case "", "CONFIGURED", "FULL":
	default:
		writeError(w, http.StatusBadRequest, fmt.Sprintf("checkpointType %q: expected CONFIGURED or FULL (tide's checkpoints are always full)", body.CheckpointType))
		return
	}
	a.startOperation(w, r, operation{ID: body.TriggerID, Kind: opCheckpoint})
}

// startOperation validates the trigger id, triggers a checkpoint on the loop and answers
// 202 {"request-id"} (Flink's asynchronous operation trigger).
func (a *AM) startOperation(w http.ResponseWriter, r *http.Request, op operation) {
	if op.ID != "" && a.api.triggers.has(op.ID) {
		writeError(w, http.StatusConflict, fmt.Sprintf("triggerId %s is already in use: omit it or pick a new one", op.ID))
		return
	}
	var terr error
	err := a.mutate(r.Context(), func() {
		op.Checkpoint, op.After, terr = a.triggerCheckpointNow()
	})
	if err == nil {
		err = terr
	}
	switch {
	case errors.Is(err, errJobTerminated) || errors.Is(err, errCheckpointRefused):
		writeError(w, http.StatusConflict, fmt.Sprintf("Cannot trigger a %s of job %s: %v", op.Kind, a.cfg.JobID, err))
		return
	case err != nil:
		writeError(w, http.StatusServiceUnavailable, fmt.Sprintf("Cannot trigger a %s of job %s: %v", op.Kind, a.cfg.JobID, err))
		return
	}
	id := a.api.triggers.add(op)
	a.log.Info("operation triggered over REST", "kind", op.Kind, "trigger", id, "checkpoint", op.Checkpoint,
		"after", op.After, "target", op.TargetDir, "remote", r.RemoteAddr)
	writeJSON(w, http.StatusAccepted, map[string]string{"request-id": id})
}

// triggerCheckpointNow starts a checkpoint, or joins the one in flight (loop goroutine).
// It returns the checkpoint's id, or 0 and the id the next checkpoint will follow when the
// next periodic trigger will take it (not every subtask runs yet, or min-pause holds).
func (a *AM) triggerCheckpointNow() (id, after int64, err error) {
	c := a.ckpt
	if c.store == nil {
		return 0, 0, fmt.Errorf("%w: checkpointing is off; set state.checkpoints.dir", errCheckpointRefused)
	}
	if !c.running {
		return 0, 0, fmt.Errorf("%w: the job is %s, expected RUNNING", errCheckpointRefused, a.sched.Status())
	}
	if id, ok := c.co.InFlight(); ok {
		return id, 0, nil
	}
	after = highestCheckpoint(c.co.Stats())
	if d := a.deployment; d != nil && d.attempt == c.attempt && d.checkpointable() {
		c.trigger(d)
		if id, ok := c.co.InFlight(); ok {
			return id, 0, nil
		}
		if highestCheckpoint(c.co.Stats()) > after {
			return 0, after, nil // triggered and failed at once: the history has the cause
		}
	}
	if c.interval <= 0 {
		return 0, 0, fmt.Errorf("%w: not every subtask is running yet (or execution.checkpointing.min-pause holds) and periodic checkpoints are off; try again shortly", errCheckpointRefused)
	}
	return 0, after, nil
}

func highestCheckpoint(s checkpoint.Stats) int64 {
	var n int64
	for _, e := range s.History {
		n = max(n, e.ID)
	}
	if s.Latest.Completed != nil {
		n = max(n, s.Latest.Completed.ID)
	}
	return n
}

// getCheckpointTrigger serves GET /jobs/:jobid/checkpoints/:triggerid.
func (a *AM) getCheckpointTrigger(w http.ResponseWriter, r *http.Request) {
	a.resolveOperations()
	id := r.PathValue("triggerid")
	op, ok := a.api.triggers.get(id, opCheckpoint)
	if !ok {
		writeError(w, http.StatusNotFound, fmt.Sprintf("Checkpoint trigger %s not found for job %s: expected the request-id of POST /jobs/%s/checkpoints", id, a.cfg.JobID, a.cfg.JobID))
		return
	}
	operationJSON := map[string]any{}
	if op.Checkpoint != 0 {
		operationJSON["checkpointId"] = op.Checkpoint
	}
	writeOperation(w, op, operationJSON)
}

// writeOperation answers Flink's asynchronous operation result.
func writeOperation(w http.ResponseWriter, op operation, body map[string]any) {
	switch op.Status {
	case opFailed:
		body["failure-cause"] = map[string]string{"class": "tide." + string(op.Kind) + ".failed", "stack-trace": op.Failure}
	case opCompleted:
		if op.Location != "" {
			body["location"] = op.Location
		}
	}
	out := map[string]any{"status": map[string]string{"id": op.Status}}
	if op.Status != opInProgress {
		out["operation"] = body
	}
	writeJSON(w, http.StatusOK, out)
}

// resolveOperations finishes the operations whose checkpoint has an outcome and starts
// the copies of completed savepoints. Any goroutine may call it.
func (a *AM) resolveOperations() {
	stats := a.view.snapshot().Checkpoints
	location := func(id int64) string { return a.checkpointURI(id) }
	for _, r := range a.api.triggers.resolve(stats, location) {
		a.startSavepointCopy(r.op, r.entry)
	}
}

func (a *AM) checkpointURI(id int64) string {
	if a.cfg.Storage == nil {
		return ""
	}
	return strings.TrimSuffix(a.cfg.Storage.URI(), "/") + "/" + checkpoint.ChkDir(a.cfg.JobID, id)
}

// getCheckpointConfig serves GET /jobs/:jobid/checkpoints/config (the settings in force,
// reloads included).
func (a *AM) getCheckpointConfig(w http.ResponseWriter, r *http.Request) {
	var cfg checkpoint.Config
	var interval time.Duration
	var enabled bool
	if err := a.inspect(r.Context(), func() {
		cfg, interval, enabled = a.ckpt.co.Config(), a.ckpt.interval, a.ckpt.store != nil
	}); err != nil {
		writeError(w, http.StatusServiceUnavailable, err.Error())
		return
	}
	intervalMS := interval.Milliseconds()
	if !enabled || interval <= 0 {
		intervalMS = -1
	}
	storageURI := ""
	if a.cfg.Storage != nil {
		storageURI = a.cfg.Storage.URI()
	}
	writeJSON(w, http.StatusOK, map[string]any{
		"mode": "exactly_once", "interval": intervalMS, "timeout": cfg.Timeout.Milliseconds(),
		"min_pause": cfg.MinPause.Milliseconds(), "max_concurrent": 1, "checkpoints_enabled": enabled,
		"externalization": map[string]bool{"enabled": enabled, "delete_on_cancellation": false},
		"state_backend":   "tide", "checkpoint_storage": storageURI, "num_retained": cfg.NumRetained,
	})
}

// getCheckpointDetails serves GET /jobs/:jobid/checkpoints/details/:checkpointid from the
// statistics' history.
func (a *AM) getCheckpointDetails(w http.ResponseWriter, r *http.Request) {
	raw := r.PathValue("checkpointid")
	id, err := strconv.ParseInt(raw, 10, 64)
	if err != nil || id < 1 {
		writeError(w, http.StatusBadRequest, fmt.Sprintf("checkpoint id %q: expected an integer ≥ 1", raw))
		return
	}
	for _, e := range a.view.snapshot().Checkpoints.History {
		if e.ID == id {
			writeJSON(w, http.StatusOK, e)
			return
		}
	}
	writeError(w, http.StatusNotFound, fmt.Sprintf("Checkpoint %d of job %s is not in the statistics history: GET /jobs/%s/checkpoints lists the recent ones", id, a.cfg.JobID, a.cfg.JobID))
}
