package am

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"path"
	"strings"
	"time"

	"github.com/tidestream/tide/core"
	"github.com/tidestream/tide/core/checkpoint"
	"github.com/tidestream/tide/rpc"
	"github.com/tidestream/tide/storage"
)

// Savepoints in CANONICAL format (the default) are checkpoints of their own kind
// (core/checkpoint TypeSavepoint). The AM queues the request, triggers it as soon as no
// checkpoint is in flight (savepoints ignore the minimum pause), and tells the TaskManagers
// the savepoint's directory with the trigger (rpc.SavepointTarget); the sources pass it on
// in their barriers. Every subtask writes its state in full, in the backend-independent
// state file, into that directory, even with execution.checkpointing.incremental; the AM
// writes the source coordinator state and _metadata (last, marked SAVEPOINT CANONICAL)
// there. So a savepoint stands alone and any state backend restores it.
//
// A savepoint shares the checkpoint ids and shows in the statistics as SAVEPOINT, but it
// is not one of the job's checkpoints: not retained, never a restore point, no reference
// to or count of <job>/shared/, and the TaskManagers' incremental chain goes on from the
// last checkpoint. As in Flink since 1.15, a savepoint commits no side effects: two-phase
// sinks commit its data with the next checkpoint (or, when a job starts from it, on
// restore); a stop-with-savepoint commits it before the job is cancelled. A savepoint that
// fails does not count against execution.checkpointing.tolerable-failed-checkpoints, and
// its directory is deleted.
//
// A NATIVE savepoint is a copy of a checkpoint in the backend's own format
// (rest_savepoints.go, checkpoint_savepoint.go), as before.

// savepointRetry paces looking again for a moment to trigger a queued savepoint.
const savepointRetry = 50 * time.Millisecond

// savepointRun is one canonical savepoint: queued, then in flight under its id.
type savepointRun struct {
	opID      string
	stop      bool
	format    checkpoint.FormatType
	targetURI string // the storage root the savepoint directory is in
	dir       string // the savepoint's directory, relative to targetURI
	id        int64  // its checkpoint id once triggered
	failed    bool   // failed: its directory is deleted once no subtask writes into it
	acks      int    // acknowledgements received (for the crash point)
}

func (r *savepointRun) target() *rpc.SavepointTarget {
	return &rpc.SavepointTarget{Format: string(r.format), StorageUri: r.targetURI, Dir: r.dir}
}

// savepointDirName is a new savepoint directory's name, as Flink names them:
// savepoint-<first 6 characters of the job id>-<random>.
func savepointDirName(jobID string) string {
	if len(jobID) > 6 {
		jobID = jobID[:6]
	}
	return "savepoint-" + jobID + "-" + newTriggerID()[:12]
}

// startCanonicalSavepoint queues a savepoint the subtasks write in canonical format.
func (a *AM) startCanonicalSavepoint(ctx context.Context, kind operationKind, targetURI, triggerID, remote string) (string, error) {
	if err := a.api.triggers.free(triggerID); err != nil {
		return "", err
	}
	run := &savepointRun{stop: kind == opStop, format: checkpoint.FormatCanonical,
		targetURI: targetURI, dir: savepointDirName(a.cfg.JobID)}
	// The operation exists before the savepoint is queued: it may complete at once.
	run.opID = a.api.triggers.add(operation{ID: triggerID, Kind: kind, TargetDir: targetURI, direct: true})
	// The directory is in the AM state before any subtask may write into it, so that the
	// next AM deletes a partial savepoint this one leaves (checkpoint_savepoint_lost.go).
	var terr error
	var version uint64
	err := a.mutate(ctx, func() {
		if terr = a.ckpt.refusal(); terr == nil {
			version = a.ckpt.recordSavepointDir(run)
		}
	})
	if err == nil && terr == nil {
		if werr := a.waitStateDurable(ctx, version); werr != nil {
			terr = statusErrorf(http.StatusServiceUnavailable, "savepoint not taken: its directory %s/%s could not be recorded in the AM state first: %v",
				targetURI, run.dir, werr)
		}
	}
	if err == nil && terr == nil {
		err = a.mutate(ctx, func() { terr = a.ckpt.requestSavepoint(run) })
	}
	if err == nil {
		err = terr
	}
	if err != nil {
		a.post(func() { a.ckpt.forgetSavepointDir(run) })
		a.api.triggers.remove(run.opID)
		return "", a.triggerRefusal(kind, err)
	}
	a.log.Info("savepoint requested over REST", "kind", kind, "trigger", run.opID, "format", run.format,
		"target", targetURI+"/"+run.dir, "remote", remote)
	return run.opID, nil
}

// requestSavepoint queues run and triggers it if it can (loop goroutine).
func (c *checkpointCoordinator) requestSavepoint(run *savepointRun) error {
	if err := c.refusal(); err != nil {
		return err
	}
	c.spQueue = append(c.spQueue, run)
	c.kickSavepoints()
	return nil
}

// kickSavepoints triggers the first queued savepoint when no checkpoint is in flight and
// every subtask runs, or looks again shortly (loop goroutine).
func (c *checkpointCoordinator) kickSavepoints() {
	if len(c.spQueue) == 0 || !c.running {
		return
	}
	_, inFlight := c.co.InFlight()
	d := c.am.deployment
	if !inFlight && c.finalizing == 0 && d != nil && d.attempt == c.attempt && d.checkpointable() {
		c.trigger(d)
	}
	if len(c.spQueue) > 0 {
		c.am.clock.AfterFunc(savepointRetry, func() { c.am.post(c.kickSavepoints) })
	}
}

// failQueuedSavepoints fails the savepoints not triggered yet (the job stopped running).
func (c *checkpointCoordinator) failQueuedSavepoints(reason string) {
	for _, run := range c.spQueue {
		c.log.Warn("savepoint not taken", "trigger", run.opID, "reason", reason)
		c.am.api.triggers.finish(run.opID, "", "savepoint not taken: "+reason)
		c.forgetSavepointDir(run) // never triggered: nothing was written
	}
	c.spQueue = nil
}

// triggeredSavepoint records that the first queued savepoint got checkpoint id.
func (c *checkpointCoordinator) triggeredSavepoint(id int64) *savepointRun {
	run := c.spQueue[0]
	c.spQueue = c.spQueue[1:]
	run.id = id
	if c.spRuns == nil {
		c.spRuns = map[int64]*savepointRun{}
	}
	c.spRuns[id] = run
	c.am.stateDirty = true // its record now names the id
	c.am.api.triggers.setCheckpoint(run.opID, id)
	return run
}

// finishSavepoint writes the coordinator state and _metadata of a savepoint every subtask
// acknowledged into its directory, off the loop; the outcome comes back to finalized.
func (c *checkpointCoordinator) finishSavepoint(done checkpoint.Completed, maxPar map[string]int, coord map[string][]byte) {
	run := c.spRuns[done.ID]
	if run == nil {
		c.am.post(func() { c.finalized(done, fmt.Errorf("savepoint %d: its target is unknown", done.ID)) })
		return
	}
	c.bg.Add(1)
	go func() {
		defer c.bg.Done()
		ctx, cancel := context.WithTimeout(c.stopCtx, c.timeout)
		defer cancel()
		err := writeSavepointMetadata(ctx, c.jobID, run, done, maxPar, coord)
		c.am.post(func() { c.finalized(done, err) })
	}()
}

// writeSavepointMetadata checks that every file the subtasks listed is in the savepoint's
// directory with its size, then writes _coordinator and, last, _metadata there.
func writeSavepointMetadata(ctx context.Context, jobID string, run *savepointRun, done checkpoint.Completed, maxPar map[string]int, coord map[string][]byte) error {
	st, err := storage.Open(ctx, run.targetURI, storage.Options{})
	if err != nil {
		return fmt.Errorf("savepoint %s/%s: open its storage: %w", run.targetURI, run.dir, err)
	}
	defer st.Close()
	md := checkpoint.NewMetadata(jobID, done, maxPar, nil)
	if err := validateListed(ctx, st, md, func(name string) string { return path.Join(run.dir, name) }); err != nil {
		return fmt.Errorf("savepoint %d: %w", done.ID, err)
	}
	if err := writeCompletion(ctx, st, run.dir, md, coord); err != nil {
		return fmt.Errorf("savepoint %d: %w", done.ID, err)
	}
	return nil
}

// savepointFinalized records a savepoint whose _metadata finishSavepoint wrote (loop
// goroutine; finalized handles a failed write as for a checkpoint).
func (c *checkpointCoordinator) savepointFinalized(done checkpoint.Completed, now time.Time) {
	if _, err := c.co.Finalized(now, done.ID); err != nil {
		c.log.Error("savepoint bookkeeping", "checkpoint", done.ID, "err", err)
		return
	}
	c.completedWriters(done.ID)
	delete(c.coord, done.ID)
	run := c.spRuns[done.ID]
	delete(c.spRuns, done.ID)
	if run == nil {
		c.log.Error("savepoint bookkeeping: completed savepoint without a target", "checkpoint", done.ID)
		return
	}
	c.forgetSavepointDir(run) // complete: the user's now
	c.am.view.setCheckpoints(c.co.Stats())
	c.am.stateDirty = true
	location := strings.TrimSuffix(run.targetURI, "/") + "/" + run.dir
	c.log.Info("savepoint completed", "checkpoint", done.ID, "trigger", run.opID, "location", location,
		"format", run.format, "duration", done.Duration, "bytes", done.Size)
	if run.stop {
		// Flink's stop-with-savepoint: its side effects are committed, then the job stops.
		c.announceComplete(done.Attempt, done.ID)
		c.log.Info("stopping the job after its savepoint", "trigger", run.opID, "location", location)
		c.am.step(core.CancelJob{})
	}
	c.am.api.triggers.finish(run.opID, location, "")
	if c.running {
		c.arm(c.interval)
	}
}

// savepointFailed finishes the operation of a failed savepoint; its directory is deleted
// by discard once no subtask writes into it.
func (c *checkpointCoordinator) savepointFailed(f checkpoint.Failed) {
	run := c.spRuns[f.ID]
	if run == nil {
		return
	}
	run.failed = true
	c.am.api.triggers.finish(run.opID, "", fmt.Sprintf("savepoint %d failed: %s", f.ID, f.Reason))
}

// discardSavepoint deletes the directory of a failed savepoint in the background; it
// reports false when id is not one.
func (c *checkpointCoordinator) discardSavepoint(id int64) bool {
	run := c.spRuns[id]
	if run == nil {
		return false
	}
	delete(c.spRuns, id)
	if !run.failed {
		return true // completed: the user's now
	}
	c.bg.Add(1)
	go func() {
		defer c.bg.Done()
		ctx, cancel := context.WithTimeout(c.stopCtx, time.Minute)
		defer cancel()
		st, err := storage.Open(ctx, run.targetURI, storage.Options{})
		if err == nil {
			err = st.Delete(ctx, run.dir)
			st.Close()
		}
		if err != nil && !errors.Is(err, storage.ErrNotFound) {
			c.log.Warn("could not delete the directory of a failed savepoint", "checkpoint", id, "path", run.targetURI+"/"+run.dir, "err", err)
			return // the record stays: the next AM deletes it
		}
		c.am.post(func() { c.forgetSavepointDir(run) })
	}()
	return true
}
