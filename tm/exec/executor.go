package exec

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"sync/atomic"
	"time"

	"github.com/tidestream/tide/core"
	"github.com/tidestream/tide/state"
	"github.com/tidestream/tide/storage"
	"github.com/tidestream/tide/stream"
	"github.com/tidestream/tide/tm/localstate"
	"github.com/tidestream/tide/tm/netplane"
)

// Reporter receives what the subtasks of this TaskManager tell the AM. It must be safe for
// concurrent use (subtasks call it from their own goroutines) and should not block long.
type Reporter interface {
	TaskState(attempt int64, vertex string, index int, state string, err error, unrecoverable bool)
	CheckpointAck(attempt, checkpointID int64, vertex string, index int, handles []StateHandle)
	CheckpointDecline(attempt, checkpointID int64, vertex string, index int, reason string)
	// RequestSplit asks the source's enumerator for splits; ahead: the reader still has a
	// split to read (stream.ReaderContext.RequestSplitAhead).
	RequestSplit(attempt int64, vertex string, index int, ahead bool)
	// InputEnded: a source subtask read its whole input and sent end of input downstream;
	// the AM triggers the job's final checkpoint once every source subtask has.
	InputEnded(attempt int64, vertex string, index int)
}

// StateHandle names one state file a subtask wrote for a checkpoint.
type StateHandle struct {
	Name string
	Size int64
}

// Config is what an Executor needs.
type Config struct {
	JobID         string
	Job           *stream.Job
	TaskManagerID string
	Storage       storage.Storage
	Plane         *netplane.Plane
	Reporter      Reporter
	Logger        *slog.Logger
	// DisableTaskMetrics turns the per-record counters of the subtasks off (the benchmark's
	// baseline); Metrics then reports only what costs nothing per record.
	DisableTaskMetrics bool
	// StateBackend selects where keyed state lives (state.backend.type).
	StateBackend StateBackendConfig
	// LocalState is the TaskManager's local state store, used when
	// StateBackend.LocalRecovery is set (nil: no local recovery).
	LocalState *localstate.Store
	// BufferTimeout is the job's execution.buffer-timeout, for every output channel and
	// buffering sink of its subtasks (see netplane.Output.SetBufferTimeout); nil: the data
	// plane's own (Plane.BufferTimeout). SetBufferTimeout changes it while they run.
	BufferTimeout *time.Duration
}

// VertexParallelism is the parallelism of one vertex in an attempt.
type VertexParallelism struct {
	Vertex                      string
	Parallelism, MaxParallelism int
	// KeyGroupStart[i]..KeyGroupEnd[i] (inclusive) are the key groups subtask i owns, as
	// the AM placed them; empty: the equal split of jobgraph.KeyGroupRange.
	KeyGroupStart, KeyGroupEnd []int
}

// Subtask is one subtask to run on this TaskManager.
type Subtask struct {
	Vertex string
	Index  int
	Slot   int
}

// Location says where a subtask of the attempt runs and where its data plane listens.
type Location struct {
	Vertex        string
	Index         int
	TaskManagerID string
	DataAddress   string
}

// DeploySpec is one attempt's deployment as seen by this TaskManager.
type DeploySpec struct {
	Attempt int64
	// RunID names the AM process that deployed the attempt (attempt numbers restart in a
	// new AM); empty in tests that run a single AM.
	RunID       string
	RestoreFrom int64 // 0: fresh start
	Vertices    []VertexParallelism
	Subtasks    []Subtask
	Locations   []Location
	// CheckpointingEnabled says the AM triggers checkpoints for this attempt. Then a subtask
	// whose input ended reports FINISHED only after a checkpoint taken after its end of input
	// completed (two-phase sinks commit their last files then). Without checkpointing sinks
	// commit when their input ends and subtasks finish at once.
	CheckpointingEnabled bool
	// RestoreLocation is where checkpoint RestoreFrom lives when it is not one of the job's
	// own in Config.Storage (a savepoint); nil: Config.Storage.
	RestoreLocation *RestoreLocation
}

// Executor runs the subtasks deployed to one TaskManager.
type Executor struct {
	cfg Config
	log *slog.Logger

	// bufferTimeout is the job's execution.buffer-timeout in force (Config.BufferTimeout,
	// SetBufferTimeout).
	bufferTimeout atomic.Int64

	mu       sync.Mutex
	attempts map[int64]*attempt
	closed   bool
	// retiring: the state backends of cancelled subtasks still closing (Close waits)
	retiring sync.WaitGroup

	linkableMu sync.Mutex
	linkable   *state.LinkableTables // copies' tables prepared for restores (prepared_restore.go)
}

// attempt is the subtasks of one deployment attempt running here.
type attempt struct {
	id     int64
	ctx    context.Context
	cancel context.CancelFunc
	tasks  []*task
	wg     sync.WaitGroup

	mu        sync.Mutex
	triggered int64 // highest checkpoint triggered
	closing   bool  // Cancel is waiting for the subtasks: start no more goroutines
	// savepoints are the targets of the checkpoints that are savepoints, from the AM's
	// trigger or a savepoint barrier (checkpoint_savepoint.go).
	savepoints map[int64]SavepointTarget
}

// highestTriggered returns the highest checkpoint triggered in the attempt so far.
func (a *attempt) highestTriggered() int64 {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.triggered
}

// spawn runs fn on a goroutine Cancel waits for; nothing runs once the attempt is closing.
func (a *attempt) spawn(fn func()) {
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.closing {
		return
	}
	a.wg.Add(1)
	go func() {
		defer a.wg.Done()
		fn()
	}()
}

// ErrClosed is returned by Deploy after Close.
var ErrClosed = errors.New("executor closed")

// NewExecutor creates an executor; it runs nothing until Deploy.
func NewExecutor(cfg Config) *Executor {
	log := cfg.Logger
	if log == nil {
		log = slog.Default()
	}
	// The caller's logger already names the TaskManager and the job.
	e := &Executor{cfg: cfg, log: log, attempts: map[int64]*attempt{}}
	switch {
	case cfg.BufferTimeout != nil:
		e.bufferTimeout.Store(int64(*cfg.BufferTimeout))
	case cfg.Plane != nil:
		e.bufferTimeout.Store(int64(cfg.Plane.BufferTimeout()))
	default:
		e.bufferTimeout.Store(int64(netplane.DefaultFlushInterval))
	}
	return e
}

// BufferTimeout returns the job's execution.buffer-timeout in force.
func (e *Executor) BufferTimeout() time.Duration { return time.Duration(e.bufferTimeout.Load()) }

// SetBufferTimeout changes the job's execution.buffer-timeout while it runs (live reload):
// subtasks deployed from now on open their channels with d, and the running ones apply it to
// their output channels and buffering sinks (stream.BufferTimeoutSetter) between records.
func (e *Executor) SetBufferTimeout(d time.Duration) {
	if time.Duration(e.bufferTimeout.Swap(int64(d))) == d {
		return
	}
	e.log.Info("execution.buffer-timeout changed", "buffer_timeout", d)
	e.mu.Lock()
	defer e.mu.Unlock()
	for _, a := range e.attempts {
		for _, t := range a.tasks {
			t.mail.put(control{kind: ctlBufferTimeout, timeout: d})
		}
	}
}

// Deploy starts the subtasks of spec that run here. It returns once they are started;
// their progress arrives through the Reporter.
func (e *Executor) Deploy(ctx context.Context, spec DeploySpec) error {
	if e.cfg.Job == nil || e.cfg.Plane == nil || e.cfg.Reporter == nil || e.cfg.Storage == nil {
		return fmt.Errorf("executor of taskmanager %s: Config needs Job, Plane, Reporter and Storage", e.cfg.TaskManagerID)
	}
	plan, err := newPlan(e.cfg.Job, spec)
	if err != nil {
		return fmt.Errorf("deploying attempt %d on taskmanager %s: %w", spec.Attempt, e.cfg.TaskManagerID, err)
	}
	a, err := e.register(ctx, plan, spec)
	if err != nil {
		return err
	}
	e.log.Info("deploying attempt", "attempt", spec.Attempt, "subtasks", len(a.tasks), "restore_from", spec.RestoreFrom)
	// The Reporter is called without e.mu held: it may call back into the executor (a
	// reader's split request can be answered at once).
	for _, t := range a.tasks {
		e.cfg.Reporter.TaskState(a.id, t.vertex.ID, t.index, string(core.TaskDeploying), nil, false)
		go func() {
			defer a.wg.Done()
			t.run()
		}()
	}
	return nil
}

// register creates the attempt and its tasks and makes them known to the executor; the
// wait group already counts the tasks, so a Cancel that comes before they start waits for them.
func (e *Executor) register(ctx context.Context, plan *plan, spec DeploySpec) (*attempt, error) {
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.closed {
		return nil, ErrClosed
	}
	if _, dup := e.attempts[spec.Attempt]; dup {
		return nil, fmt.Errorf("deploying attempt %d on taskmanager %s: already deployed", spec.Attempt, e.cfg.TaskManagerID)
	}
	actx, cancel := context.WithCancel(context.WithoutCancel(ctx))
	a := &attempt{id: spec.Attempt, ctx: actx, cancel: cancel}
	for _, st := range spec.Subtasks {
		t, err := newTask(e, a, plan, st)
		if err != nil {
			cancel()
			return nil, fmt.Errorf("deploying attempt %d on taskmanager %s: %w", spec.Attempt, e.cfg.TaskManagerID, err)
		}
		a.tasks = append(a.tasks, t)
	}
	a.wg.Add(len(a.tasks))
	e.attempts[spec.Attempt] = a
	return a, nil
}

func (e *Executor) attempt(id int64) *attempt {
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.attempts[id]
}

// Cancel stops every subtask of the attempt (each reports CANCELED unless it already
// ended) and releases the attempt's channels. It waits for the subtasks to exit or ctx.
func (e *Executor) Cancel(ctx context.Context, attemptID int64) {
	e.mu.Lock()
	a := e.attempts[attemptID]
	delete(e.attempts, attemptID)
	e.mu.Unlock()
	if a == nil {
		return
	}
	e.log.Info("cancelling attempt", "attempt", attemptID)
	a.mu.Lock()
	a.closing = true
	a.mu.Unlock()
	a.cancel()
	e.cfg.Plane.ReleaseAttempt(attemptID)
	if !waitGroup(ctx, &a.wg) {
		e.log.Warn("subtasks still stopping after cancel", "attempt", attemptID, "err", ctx.Err())
	}
}

// waitGroup waits for wg or ctx, whichever ends first; false: ctx ended first.
func waitGroup(ctx context.Context, wg *sync.WaitGroup) bool {
	done := make(chan struct{})
	go func() {
		wg.Wait()
		close(done)
	}()
	select {
	case <-done:
		return true
	case <-ctx.Done():
		return false
	}
}

// TriggerCheckpoint makes the attempt's sources here inject barrier checkpointID. Other
// subtasks take part when the barrier reaches them, except one whose input ended and whose
// producers all finished (no barrier can reach it): it snapshots on the trigger itself.
// Subtasks that already finished acknowledge with their final state (the state of their
// final checkpoint, marked as ended) until the whole attempt finishes.
func (e *Executor) TriggerCheckpoint(attemptID, checkpointID int64, timestampMillis int64) {
	a := e.attempt(attemptID)
	if a == nil {
		return
	}
	a.mu.Lock()
	if a.closing {
		a.mu.Unlock()
		return
	}
	a.triggered = max(a.triggered, checkpointID)
	a.mu.Unlock()
	for _, t := range a.tasks {
		if !t.mail.put(control{kind: ctlTrigger, checkpoint: checkpointID, timestamp: timestampMillis}) {
			a.spawn(func() { t.ackFinal(a.ctx, checkpointID) })
		}
	}
}

// NotifyCheckpointComplete tells the attempt's subtasks that a checkpoint completed
// (two-phase sinks commit).
func (e *Executor) NotifyCheckpointComplete(attemptID, checkpointID int64) {
	a := e.attempt(attemptID)
	if a == nil {
		return
	}
	for _, t := range a.tasks {
		t.mail.put(control{kind: ctlComplete, checkpoint: checkpointID})
	}
	if ls := e.cfg.LocalState; ls != nil && e.cfg.StateBackend.LocalRecovery && a.savepoint(checkpointID) == nil {
		// A savepoint (a stop-with-savepoint's is confirmed) keeps no local copy.
		ls.Confirm(e.cfg.JobID, checkpointID)
		e.prunePrepared()
	}
}

// AddSplits hands splits (and possibly "no more splits") to a source subtask's reader.
func (e *Executor) AddSplits(attemptID int64, vertex string, index int, splits []stream.Split, noMoreSplits bool) {
	a := e.attempt(attemptID)
	if a == nil {
		return
	}
	for _, t := range a.tasks {
		if t.vertex.ID == vertex && t.index == index {
			t.mail.put(control{kind: ctlSplits, splits: splits, noMore: noMoreSplits})
			return
		}
	}
	e.log.Warn("splits for a subtask not running here", "attempt", attemptID, "vertex", vertex, "index", index, "splits", len(splits))
}

// Close cancels every attempt and waits for their subtasks (bounded by ctx).
func (e *Executor) Close(ctx context.Context) error {
	e.mu.Lock()
	e.closed = true
	ids := make([]int64, 0, len(e.attempts))
	for id := range e.attempts {
		ids = append(ids, id)
	}
	e.mu.Unlock()
	for _, id := range ids {
		e.Cancel(ctx, id)
	}
	if !waitGroup(ctx, &e.retiring) {
		e.log.Warn("state backends of cancelled subtasks still closing", "err", ctx.Err())
	}
	if lt := e.preparedTables(); lt != nil {
		if err := lt.Remove(); err != nil {
			e.log.Warn("removing the tables prepared for restores", "dir", lt.Dir(), "err", err)
		}
	}
	return ctx.Err()
}
