package am

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"maps"
	"os"
	"slices"
	"sync"
	"time"

	"github.com/tidestream/tide/core"
	"github.com/tidestream/tide/core/checkpoint"
	"github.com/tidestream/tide/core/jobgraph"
	"github.com/tidestream/tide/rpc"
)

// checkpointCoordinator carries out core/checkpoint's decisions: it triggers periodic
// checkpoints while the job runs, forwards acknowledgements, writes the coordinator
// state and _metadata (last), deletes checkpoints beyond num-retained and tells the
// scheduler the outcome. It runs on the loop goroutine; only deletes run elsewhere.
type checkpointCoordinator struct {
	am       *AM
	jobID    string
	log      *slog.Logger
	store    *checkpointStore // nil: checkpointing disabled
	co       *checkpoint.Coordinator
	interval time.Duration
	timeout  time.Duration
	// tolerance fails the job over after too many consecutive counted failures.
	tolerance failureTolerance

	running  bool
	attempt  core.AttemptID
	timerGen uint64
	// finalDue: every source subtask of attempt read its whole input and the checkpoint
	// that lets the job finish is not triggered yet (checkpoint_final.go).
	finalDue bool
	// coord holds the source coordinator state of retained checkpoints, and of the
	// pending one under its id.
	coord map[int64]map[string][]byte
	// savepoint is what the job started from when it had no checkpoint of its own
	// (--fromSavepoint); nil otherwise. Its id stays the restore point until the job's
	// first own checkpoint completes.
	savepoint *savepoint
	// fromSavepoint and allowNonRestored are Config.FromSavepoint and
	// Config.AllowNonRestoredState.
	fromSavepoint    string
	allowNonRestored bool
	// pins keep checkpoints being copied into savepoints from retention's deletes.
	pins checkpointPins
	// writers are, per triggered or failed checkpoint, the subtasks that may still write
	// into its directory (see checkpoint_writers.go).
	writers map[int64]*ckptWriters
	// finalizing is the checkpoint whose _metadata is being written off the loop (0: none).
	finalizing int64
	// shared counts the shared files (incremental checkpoints) of the retained
	// checkpoints (see checkpoint_store_shared.go).
	shared *sharedRegistry
	// spQueue are the canonical savepoints requested but not triggered yet, oldest
	// first; spRuns those triggered, by checkpoint id (checkpoint_savepoint_trigger.go).
	spQueue []*savepointRun
	spRuns  map[int64]*savepointRun
	// spDirs are the canonical savepoint directories that may hold a partial savepoint,
	// persisted in the AM state; lostSavepoints those a previous AM left partial, waiting
	// for a second delete (checkpoint_savepoint_lost.go).
	spDirs         map[string]*savepointRun
	lostSavepoints []*lostSavepoint
	// stopCtx ends the writes still running when the AM stops.
	stopCtx  context.Context
	stopWork context.CancelFunc
	// lostHighest is the highest checkpoint id the lost AM triggered, as the TaskManagers
	// that outlived it reported it (0: none reported).
	lostHighest int64
	// crash is where the process kills itself for a failover test (crash_point.go).
	crash crashPoint

	bg sync.WaitGroup
}

func newCheckpointCoordinator(a *AM, cfg Config) (*checkpointCoordinator, error) {
	ccfg := checkpoint.DefaultConfig()
	ccfg.Timeout = cfg.CheckpointTimeout
	ccfg.NumRetained = cfg.NumRetained
	co, err := checkpoint.NewCoordinator(ccfg, 1)
	if err != nil {
		return nil, err
	}
	tolerable, err := parseTolerableFailedCheckpoints(cfg.Conf)
	if err != nil {
		return nil, err
	}
	c := &checkpointCoordinator{am: a, jobID: cfg.JobID, log: a.log, co: co, interval: cfg.CheckpointInterval,
		timeout: cfg.CheckpointTimeout, coord: map[int64]map[string][]byte{},
		tolerance: failureTolerance{limit: tolerable}, fromSavepoint: cfg.FromSavepoint, shared: newSharedRegistry(),
		allowNonRestored: cfg.AllowNonRestoredState}
	c.stopCtx, c.stopWork = context.WithCancel(context.Background())
	if c.crash, err = parseCrashPoint(os.Getenv(CrashPointEnv)); err != nil {
		return nil, err
	}
	if cfg.Storage != nil {
		c.store = &checkpointStore{st: cfg.Storage, jobID: cfg.JobID}
	}
	return c, nil
}

// recover finds the job's restore point before the loop starts: the newest intact
// checkpoint of its own in state.checkpoints.dir (see recoverOwn) or, when there is none
// and cfg.FromSavepoint names one, that savepoint (see restoreSavepoint); 0 starts fresh.
// The job's own checkpoints win over a savepoint: an AM restarted with the same
// --fromSavepoint resumes from where the job got to, as Flink does.
func (c *checkpointCoordinator) recover(ctx context.Context, graph *jobgraph.JobGraph) (core.CheckpointID, error) {
	own, err := c.recoverOwn(ctx)
	if err != nil {
		return 0, err
	}
	from := c.fromSavepoint
	switch {
	case from == "":
		return own, nil
	case own > 0:
		c.log.Warn("the job has checkpoints of its own: resuming from the latest of them, not from the savepoint",
			"checkpoint", own, "savepoint", from)
		return own, nil
	}
	return c.restoreSavepoint(ctx, from, graph)
}

// restoreSavepoint loads and checks the savepoint at location (see loadSavepoint) and
// makes it the restore point: checkpoint ids continue above its id, and its source
// coordinator state is what the enumerators restore.
func (c *checkpointCoordinator) restoreSavepoint(ctx context.Context, location string, graph *jobgraph.JobGraph) (core.CheckpointID, error) {
	ctx, cancel := context.WithTimeout(ctx, time.Minute)
	defer cancel()
	sp, dropped, err := loadSavepoint(ctx, location, graph, c.allowNonRestored)
	if err == nil {
		err = sp.fitBackend(c.am.cfg.Conf["state.backend.type"])
	}
	if err != nil {
		return 0, fmt.Errorf("start job %s: %w", c.jobID, err)
	}
	if len(dropped) > 0 {
		c.log.Warn("dropping the savepoint's state of vertices the job no longer has (--allowNonRestoredState)",
			"savepoint", sp.location, "vertices", dropped)
	}
	id := sp.md.CheckpointID
	for _, discard := range c.co.Adopt(nil, id) {
		c.discard(discard)
	}
	c.savepoint = sp
	c.coord[id] = sp.coord
	c.log.Info("starting from savepoint", "savepoint", sp.location, "checkpoint", id, "savepointJob", sp.md.JobID,
		"vertices", len(sp.md.Vertices), "bytes", sp.md.Size())
	return core.CheckpointID(id), nil
}

// restoreLocation is where checkpoint id lives for the TaskManagers when it is not one
// of the job's own: the savepoint the job started from. nil: the job's own storage.
func (c *checkpointCoordinator) restoreLocation(id core.CheckpointID) *rpc.RestoreLocation {
	sp := c.savepoint
	if sp == nil || int64(id) != sp.md.CheckpointID {
		return nil
	}
	return &rpc.RestoreLocation{StorageUri: sp.storageURI, Dir: sp.dir}
}

// restorePath is the full URI of the directory checkpoint id is restored from.
func (c *checkpointCoordinator) restorePath(id int64) string {
	if sp := c.savepoint; sp != nil && id == sp.md.CheckpointID {
		return sp.location
	}
	return c.chkPath(id)
}

// recoverOwn adopts the checkpoints a previous AM left and returns the newest intact
// one (before the loop starts). Incomplete checkpoints (no _metadata) are deleted. Every
// file the newest complete checkpoint's _metadata lists must exist with its recorded
// size; if one is missing or truncated, recovery falls back to the next older complete
// checkpoint and says so. Damaged checkpoints are left in place for inspection (new
// checkpoint ids continue above them).
func (c *checkpointCoordinator) recoverOwn(ctx context.Context) (core.CheckpointID, error) {
	if c.store == nil {
		return 0, nil
	}
	ctx, cancel := context.WithTimeout(ctx, time.Minute)
	defer cancel()
	sel, err := c.store.scan(ctx)
	if err != nil {
		return 0, fmt.Errorf("recover job %s: %w", c.store.jobID, err)
	}
	for _, id := range sel.Incomplete {
		c.log.Info("deleting incomplete checkpoint (no _metadata)", "checkpoint", id, "path", c.chkPath(id))
		c.discard(id)
	}
	rp, err := c.store.newestIntact(ctx, sel.Complete)
	if err != nil {
		return 0, fmt.Errorf("recover job %s: %w", c.store.jobID, err)
	}
	for _, id := range slices.Sorted(maps.Keys(rp.damaged)) {
		c.log.Error("checkpoint damaged; falling back to an older one (left in place for inspection)",
			"checkpoint", id, "fallback", rp.latest, "err", rp.damaged[id])
	}
	trimmed := c.co.Adopt(rp.adopt, sel.Highest)
	for _, id := range trimmed {
		c.discard(id)
	}
	var kept []int64
	for _, id := range rp.adopt {
		if !slices.Contains(trimmed, id) {
			kept = append(kept, id)
		}
	}
	if err := c.rebuildShared(ctx, kept); err != nil {
		return 0, fmt.Errorf("recover job %s: %w", c.store.jobID, err)
	}
	if rp.latest == 0 {
		if c.fromSavepoint == "" {
			c.log.Info("no complete checkpoint found; the job starts fresh", "dir", c.store.st.URI())
		}
		return 0, nil
	}
	state, err := c.store.readCoordinator(ctx, rp.latest)
	if err != nil {
		return 0, fmt.Errorf("recover job %s from checkpoint %d: %w", c.store.jobID, rp.latest, err)
	}
	c.coord[rp.latest] = state
	c.log.Info("recovering from checkpoint", "checkpoint", rp.latest, "skippedDamaged", len(rp.damaged),
		"path", c.chkPath(rp.latest))
	return core.CheckpointID(rp.latest), nil
}

// skipIDs makes sure no checkpoint id up to highest is used again: a TaskManager that
// outlived the previous AM reported the highest checkpoint that AM triggered (it may have
// been in flight, its directory not even created yet). That checkpoint is aborted: it
// never completes, and what the subtasks snapshotted for it is dropped with it (two-phase
// sinks carry its pre-committed data into the next completed checkpoint).
func (c *checkpointCoordinator) skipIDs(highest int64) {
	if highest <= 0 {
		return
	}
	c.lostHighest = max(c.lostHighest, highest)
	for _, id := range c.co.Adopt(nil, highest) {
		c.discard(id)
	}
}

// abandonInFlight runs when the new AM adopts attempt's subtasks (placed as placement):
// the last checkpoint the lost AM triggered, if not complete, never completes, and the
// adopted subtasks may still be writing their state into it (a subtask that was
// slow to align writes after the new AM started, its acknowledgement goes nowhere). Their
// directories go once every subtask acknowledged a later checkpoint (see writerDone),
// stopped, or after abortGrace; whatever was written is never counted as complete.
func (c *checkpointCoordinator) abandonInFlight(attempt core.AttemptID, placement map[core.SubtaskID]core.TaskManagerID) {
	latest, id := int64(c.latest()), c.lostHighest
	if id <= latest {
		return
	}
	c.log.Info("aborting the checkpoint the lost AM left in flight", "checkpoint", id, "latestComplete", latest, "path", c.chkPath(id))
	c.attachLostSavepoints(id)
	c.expectWriters(id, attempt, placement)
	c.aborted(id)
}

// latest is the newest complete checkpoint, 0 if none.
func (c *checkpointCoordinator) latest() core.CheckpointID {
	id, _ := c.co.Latest()
	return core.CheckpointID(id)
}

func (c *checkpointCoordinator) coordinatorState(id core.CheckpointID) map[string][]byte {
	return c.coord[int64(id)]
}

// deployed switches to a new attempt; restoreFrom is recorded in the statistics.
func (c *checkpointCoordinator) deployed(attempt core.AttemptID, restoreFrom core.CheckpointID) {
	now := c.am.clock.Now()
	for _, f := range c.co.NewAttempt(now, int64(attempt)) {
		c.failed(f, false, false)
	}
	c.attempt = attempt
	c.finalDue = false
	if restoreFrom > 0 {
		c.co.Restored(now, int64(restoreFrom), c.restorePath(int64(restoreFrom)))
		c.am.stateDirty = true
	}
	c.am.view.setCheckpoints(c.co.Stats())
}

// cancelled aborts the pending checkpoint (the attempt is being cancelled).
func (c *checkpointCoordinator) cancelled(reason string) {
	for _, f := range c.co.AbortPending(c.am.clock.Now(), reason) {
		c.failed(f, false, false)
	}
}

func (c *checkpointCoordinator) jobStatus(s core.JobStatus) {
	wasRunning := c.running
	c.running = s == core.StatusRunning
	switch {
	case c.running && !wasRunning:
		c.arm(c.interval)
	case !c.running && wasRunning:
		c.cancelled(fmt.Sprintf("job is %s", s))
		c.failQueuedSavepoints(fmt.Sprintf("the job is %s, expected RUNNING", s))
	}
}

// arm schedules the next trigger attempt; older trigger timers become stale.
func (c *checkpointCoordinator) arm(after time.Duration) {
	if c.store == nil || c.interval <= 0 {
		return
	}
	c.timerGen++
	gen := c.timerGen
	c.am.clock.AfterFunc(after, func() {
		c.am.post(func() {
			if gen == c.timerGen {
				c.tick()
			}
		})
	})
}

func (c *checkpointCoordinator) tick() {
	if !c.running {
		return
	}
	d := c.am.deployment
	if d == nil || d.attempt != c.attempt || !d.checkpointable() {
		// Not every subtask runs yet (or one finished): look again shortly.
		c.arm(min(c.interval, 200*time.Millisecond))
		return
	}
	c.trigger(d)
}

func (c *checkpointCoordinator) trigger(d *deployment) {
	if c.am.src.unsent > 0 {
		// Split assignments wait for the split-assignment log: the enumerators gave them
		// out before this cut, so they must reach their readers before its barriers.
		c.arm(min(c.interval, 10*time.Millisecond))
		return
	}
	now := c.am.clock.Now()
	var expected []checkpoint.Subtask
	tms := map[core.TaskManagerID]bool{}
	for _, sub := range d.subtasks() {
		expected = append(expected, checkpoint.Subtask{Vertex: string(sub.Vertex), Index: sub.Index})
		tms[d.placement[sub]] = true
	}
	var id int64
	var err error
	if len(c.spQueue) > 0 {
		// A savepoint waiting for its turn goes first (savepoints ignore the minimum pause).
		id, err = c.co.TriggerSavepoint(now, int64(d.attempt), expected, c.spQueue[0].format)
	} else {
		id, err = c.co.Trigger(now, int64(d.attempt), expected)
	}
	var early *checkpoint.TooEarlyError
	switch {
	case errors.As(err, &early):
		c.arm(max(early.Until.Sub(now), time.Millisecond))
		return
	case errors.Is(err, checkpoint.ErrInFlight):
		c.arm(c.nextDelay())
		return
	case err != nil:
		c.log.Warn("checkpoint not triggered", "attempt", d.attempt, "err", err)
		c.arm(c.interval)
		return
	}
	c.triggered(d.attempt)
	// The enumerators are snapshotted before any barrier: split assignments sent after
	// this point reach each reader after its TriggerCheckpoint (one ordered stream per
	// TaskManager), so they belong to the next checkpoint.
	coord, err := c.am.src.snapshot(id)
	if err != nil {
		for _, f := range c.co.AbortPending(now, fmt.Sprintf("source coordinator snapshot: %v", err)) {
			c.failed(f, true, false)
		}
		return
	}
	c.coord[id] = coord
	c.expectWriters(id, d.attempt, d.placement)
	c.am.view.setCheckpoints(c.co.Stats())
	tc := &rpc.TriggerCheckpoint{Attempt: int64(d.attempt), CheckpointId: id, TimestampMillis: now.UnixMilli()}
	if _, opts, _ := c.co.Pending(); opts.IsSavepoint() {
		tc.Savepoint = c.triggeredSavepoint(id).target()
	}
	msg := &rpc.JobManagerMessage{Kind: &rpc.JobManagerMessage_TriggerCheckpoint{TriggerCheckpoint: tc}}
	for tm := range tms {
		if s, ok := c.am.sessions[tm]; ok {
			s.send(msg)
		}
	}
	c.log.Debug("checkpoint triggered", "checkpoint", id, "attempt", d.attempt, "subtasks", len(expected))
	c.am.clock.AfterFunc(c.timeout, func() {
		c.am.post(func() {
			for _, f := range c.co.Timeout(c.am.clock.Now()) {
				c.failed(f, true, true)
			}
		})
	})
}

func (c *checkpointCoordinator) ack(attempt core.AttemptID, id core.CheckpointID, sub core.SubtaskID, handles []*rpc.StateHandle) {
	c.writerDone(attempt, int64(id), sub)
	hs := make([]checkpoint.StateHandle, 0, len(handles))
	for _, h := range handles {
		hs = append(hs, checkpoint.StateHandle{Name: h.GetName(), Size: h.GetSize()})
	}
	done, err := c.co.Ack(c.am.clock.Now(), int64(attempt), int64(id), checkpoint.Subtask{Vertex: string(sub.Vertex), Index: sub.Index}, hs)
	if err != nil {
		c.log.Debug("acknowledgement ignored", "checkpoint", id, "subtask", sub, "err", err)
		return
	}
	if run := c.spRuns[int64(id)]; run != nil {
		run.acks++
		c.crashIfSavepointAcked(int64(id), run.acks)
	}
	if done != nil {
		c.finish(*done)
	}
}

// decline: a subtask could not take checkpoint id (its state write failed, say).
func (c *checkpointCoordinator) decline(attempt core.AttemptID, id core.CheckpointID, sub core.SubtaskID, reason string) {
	c.writerDone(attempt, int64(id), sub)
	c.declined(attempt, id, sub, reason, true)
}

func (c *checkpointCoordinator) declined(attempt core.AttemptID, id core.CheckpointID, sub core.SubtaskID, reason string, counted bool) {
	f, err := c.co.Decline(c.am.clock.Now(), int64(attempt), int64(id), checkpoint.Subtask{Vertex: string(sub.Vertex), Index: sub.Index}, reason)
	if err != nil {
		c.log.Debug("decline ignored", "checkpoint", id, "subtask", sub, "err", err)
		return
	}
	c.failed(f, true, counted)
}

// subtaskStopped: a subtask will never acknowledge the pending checkpoint.
func (c *checkpointCoordinator) subtaskStopped(attempt core.AttemptID, sub core.SubtaskID) {
	id, ok := c.co.InFlight()
	if !ok || attempt != c.attempt {
		return
	}
	// The subtask's failure fails the attempt over already: not a checkpoint failure
	// that counts against execution.checkpointing.tolerable-failed-checkpoints.
	c.declined(attempt, core.CheckpointID(id), sub, "subtask stopped", false)
}

// failed handles a checkpoint that will not complete: its files go, the scheduler hears
// of it (when tell is set), a counted failure (see TolerableFailedCheckpointsKey) may
// fail the job over, and otherwise the next trigger is armed.
func (c *checkpointCoordinator) failed(f checkpoint.Failed, tell, counted bool) {
	if f.Options.IsSavepoint() {
		// Not one of the job's checkpoints: the scheduler does not hear of it, and it does
		// not count against the tolerable failures.
		tell, counted = false, false
		c.savepointFailed(f)
	}
	consecutive, exceeded := c.tolerance.failed(counted)
	c.log.Warn("checkpoint failed", "checkpoint", f.ID, "attempt", f.Attempt,
		"path", c.chkPath(f.ID), "reason", f.Reason,
		"counted", counted, "consecutiveFailures", consecutive, "tolerable", c.tolerance.limit)
	delete(c.coord, f.ID)
	c.aborted(f.ID)
	c.sharedFiles().orphans = true
	c.am.view.setCheckpoints(c.co.Stats())
	c.am.stateDirty = true
	if tell {
		c.am.step(core.CheckpointFailed{Attempt: core.AttemptID(f.Attempt), Checkpoint: core.CheckpointID(f.ID), Reason: f.Reason})
	}
	if exceeded {
		cause := fmt.Sprintf("%d consecutive checkpoint failures exceed %s = %d; last: checkpoint %d: %s",
			consecutive, TolerableFailedCheckpointsKey, c.tolerance.limit, f.ID, f.Reason)
		c.log.Error("failing the job over", "attempt", f.Attempt, "cause", cause)
		c.am.step(core.GlobalFailure{Error: cause})
	}
	if c.running {
		c.arm(c.interval)
	}
}

// finish writes the coordinator state and _metadata of a checkpoint every subtask
// acknowledged. The writes run off the loop (a slow NameNode must not freeze TaskManager
// loss handling, heartbeats or REST); their result comes back to the loop as finalized.
// Until then the AM holds back any new deployment (see AM.holdEffect), so a checkpoint is
// complete before anything restores, or never: a new attempt never restores an older
// checkpoint while a newer one may still become the restore point.
func (c *checkpointCoordinator) finish(done checkpoint.Completed) {
	maxPar := map[string]int{}
	if d := c.am.deployment; d != nil {
		for _, v := range d.vertices {
			maxPar[string(v.Vertex)] = v.MaxParallelism
		}
	}
	coord := c.coord[done.ID]
	c.finalizing = done.ID
	if done.Options.IsSavepoint() {
		c.finishSavepoint(done, maxPar, coord)
		return
	}
	unknown, gone := c.sharedFiles().uncounted(sharedNames(c.jobID, done.Handles))
	c.bg.Add(1)
	go func() {
		defer c.bg.Done()
		ctx, cancel := context.WithTimeout(c.stopCtx, c.timeout)
		err := c.store.checkShared(ctx, done.ID, unknown, gone)
		if err == nil {
			err = c.store.complete(ctx, done, maxPar, coord)
		}
		cancel()
		c.am.post(func() { c.finalized(done, err) })
	}()
}

// finalized takes the outcome of finish's writes (loop goroutine).
func (c *checkpointCoordinator) finalized(done checkpoint.Completed, err error) {
	c.finalizing = 0
	defer c.am.releaseHeld()
	now := c.am.clock.Now()
	if err != nil {
		f, ferr := c.co.FinalizeFailed(now, done.ID, err.Error())
		if ferr != nil {
			c.log.Error("checkpoint bookkeeping", "checkpoint", done.ID, "err", ferr)
			return
		}
		c.failed(f, true, true) // a savepoint's failure is neither told nor counted (see failed)
		return
	}
	if done.Options.IsSavepoint() {
		c.savepointFinalized(done, now)
		return
	}
	c.crashIfCompleted(done.ID)
	c.tolerance.succeeded()
	c.completedWriters(done.ID)
	c.sharedFiles().register(done.ID, sharedNames(c.jobID, done.Handles))
	discard, err := c.co.Finalized(now, done.ID)
	if err != nil {
		c.log.Error("checkpoint bookkeeping", "checkpoint", done.ID, "err", err)
		return
	}
	c.am.view.setCheckpoints(c.co.Stats())
	c.am.stateDirty = true
	c.log.Info("checkpoint completed", "checkpoint", done.ID, "attempt", done.Attempt,
		"duration", done.Duration, "bytes", done.Size)
	if sp := c.savepoint; sp != nil {
		// The job's own checkpoint is the restore point from now on.
		delete(c.coord, sp.md.CheckpointID)
		c.savepoint = nil
	}
	// Savepoints waiting for this checkpoint pin it now, before retention deletes anything.
	c.am.resolveOperations()
	c.announceComplete(done.Attempt, done.ID)
	c.am.src.notifyComplete(done.ID)
	for _, id := range discard {
		delete(c.coord, id)
		c.discard(id)
	}
	if c.sharedFiles().orphans {
		c.collectOrphans(done.ID)
	}
	c.am.step(core.CheckpointCompleted{Attempt: core.AttemptID(done.Attempt), Checkpoint: core.CheckpointID(done.ID)})
	if c.running {
		c.arm(c.nextDelay())
	}
}

// chkPath is the full URI of checkpoint id's directory, for logs.
func (c *checkpointCoordinator) chkPath(id int64) string {
	if c.store == nil {
		return ""
	}
	return c.store.st.URI() + "/" + checkpoint.ChkDir(c.store.jobID, id)
}

// checkpointCompleteMessage tells the subtasks of attempt that checkpoint id completed:
// two-phase sinks commit what they pre-committed for it (committing twice is a no-op).
func checkpointCompleteMessage(attempt, id int64) *rpc.JobManagerMessage {
	return &rpc.JobManagerMessage{Kind: &rpc.JobManagerMessage_CheckpointComplete{CheckpointComplete: &rpc.NotifyCheckpointComplete{
		Attempt: attempt, CheckpointId: id}}}
}

// announceComplete tells every TaskManager that checkpoint (or savepoint) id of attempt
// completed.
func (c *checkpointCoordinator) announceComplete(attempt, id int64) {
	msg := checkpointCompleteMessage(attempt, id)
	for _, s := range c.am.sessions {
		s.send(msg)
	}
}

// discardRetry paces retries of a checkpoint deletion that failed or left the directory.
var discardRetry = struct{ first, max time.Duration }{time.Second, 30 * time.Second}

// discard deletes checkpoint id's directory in the background and retries until it is
// gone (a failed delete, or a directory that is still there afterwards) or the AM stops.
func (c *checkpointCoordinator) discard(id int64) {
	c.settleLostSavepoints(id)
	if c.store == nil || c.discardSavepoint(id) {
		return
	}
	if c.pins.deferDelete(id) {
		c.log.Info("checkpoint beyond num-retained is being copied into a savepoint; deleting it afterwards", "checkpoint", id)
		return
	}
	free := c.sharedFiles().release(id) // shared files no retained checkpoint lists any more
	c.bg.Add(1)
	go func() {
		defer c.bg.Done()
		backoff := discardRetry.first
		for try := 1; ; try++ {
			ctx, cancel := context.WithTimeout(c.stopCtx, time.Minute)
			err := c.store.removeAll(ctx, id)
			if err == nil {
				err = c.store.deleteShared(ctx, free)
			}
			cancel()
			if err == nil {
				return
			}
			c.log.Warn("could not delete checkpoint; retrying", "checkpoint", id, "try", try, "retryIn", backoff, "err", err)
			select {
			case <-time.After(backoff):
			case <-c.stopCtx.Done():
				c.log.Warn("checkpoint left behind: the AM stopped before it could delete it", "checkpoint", id, "path", c.chkPath(id))
				return
			}
			backoff = min(2*backoff, discardRetry.max)
		}
	}()
}

func (c *checkpointCoordinator) stop() {
	c.running = false
	c.timerGen++
	c.stopWork()
}

func (c *checkpointCoordinator) wait() { c.bg.Wait() }
