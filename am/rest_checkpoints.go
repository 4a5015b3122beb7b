package am

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"time"

	"github.com/tidestream/tide/api"
	"github.com/tidestream/tide/core/checkpoint"
)

// errCheckpointRefused: a checkpoint cannot be triggered in the job's current state (409).
var errCheckpointRefused = errors.New("checkpoint refused")

// Checkpoints is GET /jobs/:jobid/checkpoints (Flink's counts/latest/history; the
// statistics span every attempt, so they survive rescales).
func (a *AM) Checkpoints() api.CheckpointingStatistics {
	a.resolveOperations()
	return checkpointStatsJSON(a.view.snapshot().Checkpoints)
}

// TriggerCheckpoint starts a checkpoint now, or joins the one in flight (POST
// /jobs/:jobid/checkpoints), and returns its trigger id for polling.
func (a *AM) TriggerCheckpoint(ctx context.Context, triggerID, remote string) (string, error) {
	return a.startOperation(ctx, operation{ID: triggerID, Kind: opCheckpoint}, remote)
}

// errCheckpointingOff: the job has no checkpoint storage (state.checkpoints.dir).
var errCheckpointingOff = errors.New("checkpointing is off")

// startOperation checks the trigger id, triggers a checkpoint on the loop and returns the
// operation's trigger id (Flink's asynchronous operation trigger).
func (a *AM) startOperation(ctx context.Context, op operation, remote string) (string, error) {
	if err := a.api.triggers.free(op.ID); err != nil {
		return "", err
	}
	var terr error
	err := a.mutate(ctx, func() {
		op.Checkpoint, op.After, terr = a.triggerCheckpointNow()
	})
	if err == nil {
		err = terr
	}
	if err != nil {
		return "", a.triggerRefusal(op.Kind, err)
	}
	id := a.api.triggers.add(op)
	a.log.Info("operation triggered over REST", "kind", op.Kind, "trigger", id, "checkpoint", op.Checkpoint,
		"after", op.After, "target", op.TargetDir, "remote", remote)
	return id, nil
}

// triggerRefusal is the REST error for a checkpoint or savepoint the AM did not trigger:
// 409 when the job's state refuses it, 503 when the loop did not answer.
func (a *AM) triggerRefusal(kind operationKind, err error) error {
	switch {
	case errors.Is(err, errCheckpointingOff) && kind != opCheckpoint:
		// Savepoints are taken by the checkpoint coordinator, which runs only with
		// checkpoint storage: a NATIVE savepoint is a checkpoint written there, then copied.
		return statusErrorf(http.StatusConflict, "Cannot trigger a %s of job %s: %v: a savepoint needs it even with a target directory (a CANONICAL savepoint's files go to the target directory, but the checkpoint coordinator that takes it runs only with checkpoint storage; a NATIVE savepoint is a checkpoint the TaskManagers write to the job's checkpoint storage, then copied under the target directory)", kind, a.cfg.JobID, err)
	case errors.Is(err, errJobTerminated) || errors.Is(err, errCheckpointRefused):
		return statusErrorf(http.StatusConflict, "Cannot trigger a %s of job %s: %v", kind, a.cfg.JobID, err)
	}
	return statusErrorf(http.StatusServiceUnavailable, "Cannot trigger a %s of job %s: %v", kind, a.cfg.JobID, err)
}

// refusal says why no checkpoint or savepoint can be triggered now, nil when one can
// (loop goroutine).
func (c *checkpointCoordinator) refusal() error {
	if c.store == nil {
		return fmt.Errorf("%w: %w; set state.checkpoints.dir", errCheckpointRefused, errCheckpointingOff)
	}
	if !c.running {
		return fmt.Errorf("%w: the job is %s, expected RUNNING; trigger again once it runs", errCheckpointRefused, c.am.sched.Status())
	}
	return nil
}

// triggerCheckpointNow starts a checkpoint, or joins the one in flight (loop goroutine).
// It returns the checkpoint's id, or 0 and the id the next checkpoint will follow when the
// next periodic trigger will take it (not every subtask runs yet, or min-pause holds).
func (a *AM) triggerCheckpointNow() (id, after int64, err error) {
	c := a.ckpt
	if err := c.refusal(); err != nil {
		return 0, 0, err
	}
	id, opts, inFlight := c.co.Pending()
	if !inFlight {
		after = highestCheckpoint(c.co.Stats())
		if d := a.deployment; d != nil && d.attempt == c.attempt && d.checkpointable() {
			c.trigger(d)
			id, opts, inFlight = c.co.Pending()
			if !inFlight && highestCheckpoint(c.co.Stats()) > after {
				return 0, after, nil // triggered and failed at once: the history has the cause
			}
		}
	}
	switch {
	case inFlight && !opts.IsSavepoint():
		return id, 0, nil
	case inFlight:
		after = id // a savepoint in flight (or queued, triggered first): not one to join
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

// CheckpointOperation polls a triggered checkpoint (GET /jobs/:jobid/checkpoints/:triggerid).
func (a *AM) CheckpointOperation(triggerID string) (api.AsyncOperation, error) {
	a.resolveOperations()
	op, ok := a.api.triggers.poll(triggerID, opCheckpoint)
	if !ok {
		return api.AsyncOperation{}, statusErrorf(http.StatusNotFound, "Checkpoint trigger %s not found for job %s: expected the request-id of POST /jobs/%s/checkpoints", triggerID, a.cfg.JobID, a.cfg.JobID)
	}
	res := api.OperationResult{CheckpointID: op.Checkpoint}
	return operationJSON(op, res), nil
}

// operationJSON is Flink's asynchronous operation result of op; res holds what the kind
// of operation adds.
func operationJSON(op operation, res api.OperationResult) api.AsyncOperation {
	switch op.Status {
	case opFailed:
		res.FailureCause = &api.FailureCause{Class: "tide." + string(op.Kind) + ".failed", StackTrace: op.Failure}
	case opCompleted:
		res.Location = op.Location
	}
	out := api.AsyncOperation{Status: api.QueueStatus{ID: op.Status}}
	if op.Status != opInProgress {
		out.Operation = &res
	}
	return out
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

// CheckpointConfig is GET /jobs/:jobid/checkpoints/config (the settings in force, reloads
// included).
func (a *AM) CheckpointConfig(ctx context.Context) (api.CheckpointConfig, error) {
	var cfg checkpoint.Config
	var interval time.Duration
	var enabled bool
	if err := a.inspect(ctx, func() {
		cfg, interval, enabled = a.ckpt.co.Config(), a.ckpt.interval, a.ckpt.store != nil
	}); err != nil {
		return api.CheckpointConfig{}, unavailable(err)
	}
	intervalMS := interval.Milliseconds()
	if !enabled || interval <= 0 {
		intervalMS = -1
	}
	storageURI := ""
	if a.cfg.Storage != nil {
		storageURI = a.cfg.Storage.URI()
	}
	return api.CheckpointConfig{
		Mode: "exactly_once", Interval: intervalMS, Timeout: cfg.Timeout.Milliseconds(),
		MinPause: cfg.MinPause.Milliseconds(), MaxConcurrent: 1, CheckpointsEnabled: enabled,
		Externalization: api.Externalization{Enabled: enabled},
		StateBackend:    "tide", CheckpointStorage: storageURI, NumRetained: cfg.NumRetained,
	}, nil
}

// Checkpoint is one checkpoint of the statistics' history
// (GET /jobs/:jobid/checkpoints/details/:checkpointid).
func (a *AM) Checkpoint(id int64) (api.CheckpointStatistics, error) {
	for _, e := range a.view.snapshot().Checkpoints.History {
		if e.ID == id {
			return historyEntryJSON(e), nil
		}
	}
	return api.CheckpointStatistics{}, statusErrorf(http.StatusNotFound, "Checkpoint %d of job %s is not in the statistics history: GET /jobs/%s/checkpoints lists the recent ones", id, a.cfg.JobID, a.cfg.JobID)
}

func historyEntryJSON(e checkpoint.HistoryEntry) api.CheckpointStatistics {
	typ := e.Type()
	return api.CheckpointStatistics{ID: e.ID, Attempt: e.Attempt, Status: e.Status, IsSavepoint: typ == checkpoint.TypeSavepoint,
		CheckpointType: string(typ), SavepointFormat: string(e.SavepointFormat), TriggerTimestamp: e.TriggerTimestamp,
		LatestAckTimestamp: e.LatestAckTimestamp, StateSize: e.StateSize, EndToEndDuration: e.EndToEndDuration,
		NumSubtasks: e.NumSubtasks, NumAcknowledgedSubtasks: e.NumAcknowledgedSubtasks,
		FailureTimestamp: e.FailureTimestamp, FailureMessage: e.FailureMessage}
}

// checkpointStatsJSON is GET /jobs/:jobid/checkpoints of the statistics s.
func checkpointStatsJSON(s checkpoint.Stats) api.CheckpointingStatistics {
	c := s.Counts
	out := api.CheckpointingStatistics{
		Counts:  api.CheckpointCounts{Restored: c.Restored, Total: c.Total, InProgress: c.InProgress, Completed: c.Completed, Failed: c.Failed},
		History: make([]api.CheckpointStatistics, 0, len(s.History)),
	}
	for _, e := range s.History {
		out.History = append(out.History, historyEntryJSON(e))
	}
	if e := s.Latest.Completed; e != nil {
		v := historyEntryJSON(*e)
		out.Latest.Completed = &v
	}
	if e := s.Latest.Savepoint; e != nil {
		v := historyEntryJSON(*e)
		out.Latest.Savepoint = &v
	}
	if e := s.Latest.Failed; e != nil {
		v := historyEntryJSON(*e)
		out.Latest.Failed = &v
	}
	if r := s.Latest.Restored; r != nil {
		out.Latest.Restored = &api.RestoredCheckpoint{ID: r.ID, RestoreTimestamp: r.RestoreTimestamp, IsSavepoint: r.IsSavepoint, ExternalPath: r.ExternalPath}
	}
	return out
}
