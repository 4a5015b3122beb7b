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
	"github.com/tidestream/tide/storage"
	"github.com/tidestream/tide/stream"
	"github.com/tidestream/tide/tm/exec"
)

// checkpointsDirKey is the key of the checkpoint directory in the AM's configuration.
const (
	checkpointsDirKey   = "state.checkpoints.dir"
	operatorChainingKey = "pipeline.operator-chaining"
)

// serve runs the job's subtasks for one registered connection until it ends.
func (w *worker) serve(ctx context.Context, c *connection) (outcome, error) {
	defer c.close()
	reg := c.registered
	log := w.log.With("job", reg.GetJobName(), "jobID", reg.GetJobId())
	build, ok := stream.Lookup(reg.GetJobName())
	if !ok {
		return outcomeStopped, fmt.Errorf("TaskManager %s: AM runs job %q: %w (this binary has %v); start the TaskManager from the AM's binary",
			w.cfg.ID, reg.GetJobName(), ErrUnknownJob, stream.Names())
	}
	job, err := build(reg.GetJobArgs())
	if err != nil {
		return outcomeStopped, fmt.Errorf("TaskManager %s: build job %q with args %q: %w", w.cfg.ID, reg.GetJobName(), reg.GetJobArgs(), err)
	}
	if v, ok := reg.GetConfig()[operatorChainingKey]; ok {
		chaining, err := strconv.ParseBool(v)
		if err != nil {
			return outcomeStopped, fmt.Errorf("TaskManager %s: the AM's %s %q: %w", w.cfg.ID, operatorChainingKey, v, err)
		}
		if !chaining {
			job.DisableChaining() // as the AM built it
		}
	}
	st, err := w.openStorage(ctx, reg.GetConfig()[checkpointsDirKey])
	if err != nil {
		return outcomeStopped, err
	}
	defer st.Close()

	backend, err := stateBackendConfig(reg.GetConfig(), log)
	if err != nil {
		return outcomeStopped, fmt.Errorf("TaskManager %s: %w", w.cfg.ID, err)
	}
	sess := &amSession{stream: c.stream}
	space := newAttemptSpace(reg.GetRunId())
	ex := exec.NewExecutor(exec.Config{JobID: reg.GetJobId(), Job: job, TaskManagerID: w.cfg.ID,
		Storage: st, Plane: w.plane, StateBackend: backend, LocalState: openLocalState(backend, w.cfg.ID, log), Reporter: reporter{s: sess, space: space}, Logger: w.log})
	defer func() {
		cctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		if err := ex.Close(cctx); err != nil {
			log.Warn("closing executor", "err", err)
		}
	}()
	fetcher, err := w.newFetcher(reg.GetJobId(), st, sess, log)
	if err != nil {
		return outcomeStopped, err
	}
	defer fetcher.Close()
	log.Info("registered with the AM", "am", w.am)

	hbDone := make(chan struct{})
	defer close(hbDone)
	go w.heartbeat(sess, time.Duration(reg.GetHeartbeatIntervalMillis())*time.Millisecond, hbDone)
	go reportMetrics(sess, ex, space, taskMetricsInterval, hbDone)

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
			log.Warn("lost the AM; cancelling every task and reconnecting", "am", w.am, "err", err)
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
			if done := w.dispatch(ctx, ex, space, m, log); done {
				sess.finish(nil)
				return outcomeDisconnected, nil
			}
		}
	}
}

// dispatch carries out one AM message; it reports true on Disconnect.
func (w *worker) dispatch(ctx context.Context, ex *exec.Executor, space attemptSpace, m *rpc.JobManagerMessage, log *slog.Logger) bool {
	switch k := m.GetKind().(type) {
	case *rpc.JobManagerMessage_Deploy:
		spec := deploySpec(k.Deploy)
		log.Info("deploying subtasks", "attempt", spec.Attempt, "restoreFrom", spec.RestoreFrom, "subtasks", len(spec.Subtasks))
		spec.Attempt = space.local(spec.Attempt)
		if err := ex.Deploy(ctx, spec); err != nil {
			log.Error("deploy failed", "attempt", spec.Attempt, "err", err)
		}
	case *rpc.JobManagerMessage_Cancel:
		log.Info("cancelling attempt", "attempt", k.Cancel.GetAttempt(), "reason", k.Cancel.GetReason())
		// Cancelling must finish even while the TaskManager itself is stopping.
		cctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 30*time.Second)
		ex.Cancel(cctx, space.local(k.Cancel.GetAttempt()))
		cancel()
	case *rpc.JobManagerMessage_TriggerCheckpoint:
		t := k.TriggerCheckpoint
		ex.TriggerCheckpoint(space.local(t.GetAttempt()), t.GetCheckpointId(), t.GetTimestampMillis())
	case *rpc.JobManagerMessage_CheckpointComplete:
		n := k.CheckpointComplete
		ex.NotifyCheckpointComplete(space.local(n.GetAttempt()), n.GetCheckpointId())
	case *rpc.JobManagerMessage_SplitAssignment:
		a := k.SplitAssignment
		splits := make([]stream.Split, 0, len(a.GetSplits()))
		for _, s := range a.GetSplits() {
			splits = append(splits, stream.Split{ID: s.GetId(), Data: s.GetData()})
		}
		ex.AddSplits(space.local(a.GetAttempt()), a.GetVertex(), int(a.GetIndex()), splits, a.GetNoMoreSplits())
	case *rpc.JobManagerMessage_Disconnect:
		log.Info("the AM disconnected this TaskManager; exiting", "reason", k.Disconnect.GetReason())
		return true
	case *rpc.JobManagerMessage_Rejected:
		log.Warn("the AM rejected this TaskManager after registration; exiting", "reason", k.Rejected.GetReason())
		return true
	default:
		log.Warn("ignoring unknown message from the AM", "type", fmt.Sprintf("%T", k))
	}
	return false
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
