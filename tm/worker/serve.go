package worker

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"strconv"
	"time"

	"github.com/tidestream/tide/rpc"
	"github.com/tidestream/tide/state"
	"github.com/tidestream/tide/storage"
	"github.com/tidestream/tide/stream"
	"github.com/tidestream/tide/tm/exec"
	"github.com/tidestream/tide/tm/localstate"
)

// checkpointsDirKey is the key of the checkpoint directory in the AM's configuration.
const (
	checkpointsDirKey   = "state.checkpoints.dir"
	operatorChainingKey = "pipeline.operator-chaining"
)

// heldJob is the job a TaskManager runs. It outlives one AM connection: when the AM is
// lost, the subtasks keep running (the data plane between TaskManagers does not need the
// AM) and the next AM of the same job is offered them (see relay and taskBook).
type heldJob struct {
	jobID string
	ex    *exec.Executor
	st    storage.Storage
	relay *relay
	// adopted maps an attempt number the current AM adopted to the local attempt id
	// (it was deployed by an earlier AM, in another attempt space).
	adopted map[int64]int64
	// local is the local state store (nil without local recovery); warm-up and standby
	// copies go there too.
	localState *localstate.Store
	// ended: the AM said the job is over for good (Disconnect.job_ended); closing the
	// job deletes its local state then (local_state_cleanup.go).
	ended bool
}

// close cancels every subtask and closes the storage.
func (h *heldJob) close(log *slog.Logger) {
	cctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	err := h.ex.Close(cctx)
	if err != nil {
		log.Warn("closing executor", "err", err)
	}
	h.dropLocalState(err == nil, log)
	_ = h.st.Close()
}

// closeHeld ends the held job, if any.
func (w *worker) closeHeld() {
	if w.held != nil {
		w.held.close(w.log)
		w.held = nil
	}
}

// jobFor returns the job the AM of reg runs: the held one when it is the same job (an AM
// failover), else a new one (a held job of another job is cancelled first).
func (w *worker) jobFor(ctx context.Context, reg *rpc.Registered, log *slog.Logger) (*heldJob, error) {
	timeout, err := jobBufferTimeout(reg.GetConfig())
	if err != nil {
		return nil, fmt.Errorf("TaskManager %s: %w", w.cfg.ID, err)
	}
	if h := w.held; h != nil {
		if h.jobID == reg.GetJobId() {
			if timeout != nil {
				h.ex.SetBufferTimeout(*timeout) // the new AM's value, reloaded while it was away
			}
			return h, nil
		}
		log.Warn("the AM runs another job; cancelling the subtasks kept from the last one", "kept_job", h.jobID)
		w.closeHeld()
	}
	build, ok := stream.Lookup(reg.GetJobName())
	if !ok {
		return nil, fmt.Errorf("TaskManager %s: AM runs job %q: %w (this binary has %v); start the TaskManager from the AM's binary",
			w.cfg.ID, reg.GetJobName(), ErrUnknownJob, stream.Names())
	}
	job, err := build(reg.GetJobArgs())
	if err != nil {
		return nil, fmt.Errorf("TaskManager %s: build job %q with args %q: %w", w.cfg.ID, reg.GetJobName(), reg.GetJobArgs(), err)
	}
	if v, ok := reg.GetConfig()[operatorChainingKey]; ok {
		chaining, err := strconv.ParseBool(v)
		if err != nil {
			return nil, fmt.Errorf("TaskManager %s: the AM's %s %q: %w", w.cfg.ID, operatorChainingKey, v, err)
		}
		if !chaining {
			job.DisableChaining() // as the AM built it
		}
	}
	st, err := w.openStorage(ctx, reg.GetConfig()[checkpointsDirKey])
	if err != nil {
		return nil, err
	}
	backend, err := stateBackendConfig(reg.GetConfig(), log)
	if err != nil {
		_ = st.Close()
		return nil, fmt.Errorf("TaskManager %s: %w", w.cfg.ID, err)
	}
	if warmupsWanted(reg.GetConfig()) && !backend.LocalRecovery {
		log.Info("warm-up or standby copies configured: local recovery on, so restores read the copies")
		backend.LocalRecovery = true
	}
	backend.Memory = w.memory
	w.setGoMemoryLimit(backend.Type)
	if backend.Type == state.Pebble {
		w.cleanPebbleDir(backend.Dir)
	}
	h := &heldJob{jobID: reg.GetJobId(), st: st, relay: newRelay(), adopted: map[int64]int64{}}
	h.localState = w.localStateStore(backend, log)
	h.ex = exec.NewExecutor(exec.Config{JobID: reg.GetJobId(), Job: job, TaskManagerID: w.cfg.ID,
		Storage: st, Plane: w.plane, StateBackend: backend, LocalState: h.localState, Reporter: h.relay, Logger: w.log,
		BufferTimeout: timeout})
	w.held = h
	return h, nil
}

// serve runs the job's subtasks for one registered connection until it ends. When the AM
// is lost the subtasks keep running (outcomeLost); otherwise they are cancelled.
func (w *worker) serve(ctx context.Context, c *connection) (outcome, error) {
	defer c.close()
	reg := c.registered
	log := w.log.With("job", reg.GetJobName(), "jobID", reg.GetJobId())
	h, err := w.jobFor(ctx, reg, log)
	if err != nil {
		if ctx.Err() != nil {
			return outcomeStopped, nil // stopping (SIGTERM) while the job was being set up
		}
		return outcomeStopped, err
	}
	sess := &amSession{stream: c.stream}
	space := newAttemptSpace(reg.GetRunId())
	h.adopted = map[int64]int64{}
	h.relay.attach(sess)
	kept := false
	defer func() {
		h.relay.detach()
		if !kept {
			w.closeHeld()
		}
	}()
	fetcher := w.newFetcher(reg.GetJobId(), h.st, h.localState, h.ex, sess, log)
	defer fetcher.Close()
	log.Info("registered with the AM", "am", w.am, "kept_subtasks", len(c.reported))

	hbDone := make(chan struct{})
	defer close(hbDone)
	go w.heartbeat(sess, time.Duration(reg.GetHeartbeatIntervalMillis())*time.Millisecond, hbDone)
	go reportMetrics(sess, h.ex, space, taskMetricsInterval, hbDone)

	msgs := make(chan *rpc.JobManagerMessage)
	recvErr := make(chan error, 1)
	go func() {
		for {
			m, err := c.stream.Recv()
			if err != nil {
				recvErr <- err
				return
			}
			select {
			case msgs <- m:
			case <-hbDone:
				return
			}
		}
	}()
	for {
		select {
		case <-ctx.Done():
			log.Info("TaskManager stopping: unregistering from the AM", "cause", context.Cause(ctx))
			sess.finish(&rpc.TaskManagerMessage{Kind: &rpc.TaskManagerMessage_Unregister{Unregister: &rpc.Unregister{
				Reason: "TaskManager shutting down"}}})
			return outcomeStopped, nil
		case err := <-recvErr:
			sess.finish(nil)
			if errors.Is(err, io.EOF) {
				err = errors.New("AM closed the connection")
			}
			kept = true
			n := 0
			h.relay.with(func(b *taskBook) { n = len(b.report()) })
			log.Warn("lost the AM; the subtasks keep running while reconnecting", "am", w.am, "subtasks", n, "err", err)
			return outcomeLost, nil
		case m := <-msgs:
			if k, ok := m.GetKind().(*rpc.JobManagerMessage_Warmup); ok {
				fetcher.Request(warmupRequest(k.Warmup))
				continue
			}
			if k, ok := m.GetKind().(*rpc.JobManagerMessage_WarmupStop); ok {
				log.Info("warm-up round ended", "round", k.WarmupStop.GetRound(), "reason", k.WarmupStop.GetReason())
				fetcher.Stop(k.WarmupStop.GetRound())
				continue
			}
			if done := w.dispatch(ctx, h, space, m, log); done {
				sess.finish(nil)
				return outcomeDisconnected, nil
			}
		}
	}
}

// local is the TaskManager's attempt id of the current AM's attempt a.
func (h *heldJob) local(space attemptSpace, a int64) int64 {
	if id, ok := h.adopted[a]; ok {
		return id
	}
	return space.local(a)
}

// dispatch carries out one AM message; it reports true on Disconnect.
func (w *worker) dispatch(ctx context.Context, h *heldJob, space attemptSpace, m *rpc.JobManagerMessage, log *slog.Logger) bool {
	ex := h.ex
	switch k := m.GetKind().(type) {
	case *rpc.JobManagerMessage_Deploy:
		spec := deploySpec(k.Deploy)
		log.Info("deploying subtasks", "attempt", spec.Attempt, "restoreFrom", spec.RestoreFrom, "subtasks", len(spec.Subtasks))
		amNum := spec.Attempt
		spec.Attempt = space.local(spec.Attempt)
		delete(h.adopted, amNum)
		h.relay.with(func(b *taskBook) { b.deployed(spec, amNum) })
		if err := ex.Deploy(ctx, spec); err != nil {
			log.Error("deploy failed", "attempt", spec.Attempt, "err", err)
		}
	case *rpc.JobManagerMessage_Cancel:
		log.Info("cancelling attempt", "attempt", k.Cancel.GetAttempt(), "reason", k.Cancel.GetReason())
		w.cancelLocal(ctx, h, h.local(space, k.Cancel.GetAttempt()))
	case *rpc.JobManagerMessage_FailoverCancel:
		fc := k.FailoverCancel
		log.Info("the AM does not adopt the subtasks kept across the AM failover; cancelling them",
			"attempt", fc.GetAttempt(), "run", fc.GetRunId(), "reason", fc.GetReason())
		w.cancelLocal(ctx, h, newAttemptSpace(fc.GetRunId()).local(fc.GetAttempt()))
	case *rpc.JobManagerMessage_FailoverAdopt:
		fa := k.FailoverAdopt
		id := newAttemptSpace(fa.GetRunId()).local(fa.GetAttempt())
		h.adopted[fa.GetAttempt()] = id
		log.Info("the AM adopted the subtasks kept across the AM failover; they carry on", "attempt", fa.GetAttempt(), "run", fa.GetRunId())
		h.relay.adopted(id)
	case *rpc.JobManagerMessage_TriggerCheckpoint:
		t := k.TriggerCheckpoint
		id := h.local(space, t.GetAttempt())
		h.relay.with(func(b *taskBook) { b.triggered(id, t.GetCheckpointId()) })
		if sp := t.GetSavepoint(); sp != nil {
			ex.TriggerSavepoint(id, t.GetCheckpointId(), t.GetTimestampMillis(),
				exec.SavepointTarget{Format: sp.GetFormat(), StorageURI: sp.GetStorageUri(), Dir: sp.GetDir()})
		} else {
			ex.TriggerCheckpoint(id, t.GetCheckpointId(), t.GetTimestampMillis())
		}
	case *rpc.JobManagerMessage_CheckpointComplete:
		n := k.CheckpointComplete
		id := h.local(space, n.GetAttempt())
		h.relay.with(func(b *taskBook) { b.completed(id, n.GetCheckpointId()) })
		ex.NotifyCheckpointComplete(id, n.GetCheckpointId())
	case *rpc.JobManagerMessage_SplitAssignment:
		a := k.SplitAssignment
		id := h.local(space, a.GetAttempt())
		splits := make([]stream.Split, 0, len(a.GetSplits()))
		ids := make([]string, 0, len(a.GetSplits()))
		for _, s := range a.GetSplits() {
			splits = append(splits, stream.Split{ID: s.GetId(), Data: s.GetData()})
			ids = append(ids, s.GetId())
		}
		h.relay.with(func(b *taskBook) { b.splits(id, a.GetVertex(), int(a.GetIndex()), ids, a.GetNoMoreSplits()) })
		ex.AddSplits(id, a.GetVertex(), int(a.GetIndex()), splits, a.GetNoMoreSplits())
	case *rpc.JobManagerMessage_BufferTimeout:
		d := bufferTimeoutOf(k.BufferTimeout)
		log.Info("the AM reloaded execution.buffer-timeout", "buffer_timeout", d)
		ex.SetBufferTimeout(d)
	case *rpc.JobManagerMessage_Disconnect:
		log.Info("the AM disconnected this TaskManager; exiting", "reason", k.Disconnect.GetReason(), "job_ended", k.Disconnect.GetJobEnded())
		h.ended = k.Disconnect.GetJobEnded()
		return true
	case *rpc.JobManagerMessage_Rejected:
		log.Warn("the AM rejected this TaskManager after registration; exiting", "reason", k.Rejected.GetReason())
		return true
	default:
		log.Warn("ignoring unknown message from the AM", "type", fmt.Sprintf("%T", k))
	}
	return false
}

// cancelLocal cancels a local attempt and forgets it.
func (w *worker) cancelLocal(ctx context.Context, h *heldJob, id int64) {
	// Cancelling must finish even while the TaskManager itself is stopping.
	cctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 30*time.Second)
	h.ex.Cancel(cctx, id)
	cancel()
	h.relay.released(id)
}

func deploySpec(d *rpc.DeployTasks) exec.DeploySpec {
	spec := exec.DeploySpec{Attempt: d.GetAttempt(), RunID: d.GetRunId(), RestoreFrom: d.GetRestoreFrom(),
		CheckpointingEnabled: d.GetCheckpointingEnabled()}
	if l := d.GetRestoreLocation(); l != nil {
		spec.RestoreLocation = &exec.RestoreLocation{StorageURI: l.GetStorageUri(), Dir: l.GetDir()}
	}
	for _, v := range d.GetVertices() {
		vp := exec.VertexParallelism{Vertex: v.GetVertex(),
			Parallelism: int(v.GetParallelism()), MaxParallelism: int(v.GetMaxParallelism())}
		for _, s := range v.GetKeyGroupStart() {
			vp.KeyGroupStart = append(vp.KeyGroupStart, int(s))
		}
		for _, e := range v.GetKeyGroupEnd() {
			vp.KeyGroupEnd = append(vp.KeyGroupEnd, int(e))
		}
		spec.Vertices = append(spec.Vertices, vp)
	}
	for _, s := range d.GetSubtasks() {
		spec.Subtasks = append(spec.Subtasks, exec.Subtask{Vertex: s.GetVertex(), Index: int(s.GetIndex()), Slot: int(s.GetSlot())})
	}
	for _, l := range d.GetLocations() {
		spec.Locations = append(spec.Locations, exec.Location{Vertex: l.GetVertex(), Index: int(l.GetIndex()),
			TaskManagerID: l.GetTaskManagerId(), DataAddress: l.GetDataAddress()})
	}
	return spec
}

func (w *worker) heartbeat(sess *amSession, every time.Duration, done <-chan struct{}) {
	if every <= 0 {
		every = 10 * time.Second
	}
	t := time.NewTicker(every)
	defer t.Stop()
	for {
		select {
		case <-t.C:
			if err := sess.send(&rpc.TaskManagerMessage{Kind: &rpc.TaskManagerMessage_Heartbeat{Heartbeat: &rpc.Heartbeat{
				TimestampMillis: time.Now().UnixMilli()}}}); err != nil {
				return
			}
		case <-done:
			return
		}
	}
}

// openStorage opens the job's checkpoint storage; without state.checkpoints.dir the
// subtasks write to a private temporary directory (nothing survives a restart then).
func (w *worker) openStorage(ctx context.Context, uri string) (storage.Storage, error) {
	if uri == "" {
		dir, err := os.MkdirTemp("", "tide-"+filepath.Base(w.cfg.ID)+"-")
		if err != nil {
			return nil, fmt.Errorf("TaskManager %s: temporary state directory: %w", w.cfg.ID, err)
		}
		w.log.Warn("no state.checkpoints.dir configured: state goes to a temporary directory", "dir", dir)
		uri = "file://" + dir
	}
	st, err := storage.Open(ctx, uri, storage.Options{})
	if err != nil {
		return nil, fmt.Errorf("TaskManager %s: open checkpoint storage %s: %w", w.cfg.ID, uri, err)
	}
	return st, nil
}
