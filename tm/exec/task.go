package exec

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"runtime/debug"
	"sync"
	"sync/atomic"
	"time"

	"github.com/tidestream/tide/core"
	"github.com/tidestream/tide/core/jobgraph"
	"github.com/tidestream/tide/state"
	"github.com/tidestream/tide/stream"
	"github.com/tidestream/tide/tm/netplane"
	"github.com/tidestream/tide/tm/snapshot"
)

// task is one subtask: a vertex's chain at one index.
type task struct {
	e               *Executor
	a               *attempt
	plan            *plan
	vertex          *stream.Vertex
	index           int
	parallelism     int
	maxP            int
	kgStart, kgEnd  int
	backend         state.Backend        // keyed state (nil: hashmap)
	uploads         *uploads             // background checkpoint uploads (checkpoint_async.go)
	incr            *incrementalState    // tables in checkpoint storage (checkpoint_incremental.go)
	restoredDB      *state.PebbleBackend // restored from database files, until openBackend takes it
	log             *slog.Logger
	mail            *mailbox
	finished        atomic.Bool
	ackMu           sync.Mutex
	lastAcked       int64
	ctx             context.Context
	chain           []stream.ChainOperator
	colls           []stream.Collector // colls[i] is what chain[i] emits into
	head            stream.Collector
	router          *router
	inputs          []*inputChan
	events          chan *batch // batches from the inputs
	pending         *batch      // the batch being processed
	next            int         // its next event
	reader          stream.SourceReader
	wmGen           stream.WatermarkGenerator
	watermark       int64
	lastWmEmitNanos int64
	processed       int64
	metrics         *taskMetrics
	closedInputs    int // inputs whose producer finished (end of partition)
	// bufferTimeout is the job's execution.buffer-timeout this subtask runs with (its
	// outputs and buffering sinks); ctlBufferTimeout changes it.
	bufferTimeout time.Duration

	// End of input (FLIP-147). ended: EndInput ran and end of data went downstream.
	// endedOnRestore: every subtask of the vertex had ended in the restored checkpoint, so
	// this one produces nothing and finishes once its inputs closed. finalCkpt: the first
	// checkpoint snapshotted after the end of input; committed: a checkpoint >= finalCkpt
	// completed. final is the state acknowledged for checkpoints after the subtask finished
	// (set before the mailbox closes, read after).
	ended          bool
	endedOnRestore bool
	finalCkpt      int64
	committed      bool
	final          *snapshot.Writer
}

// unrecoverable marks failures no restart can fix (a checkpoint that cannot be restored).
type unrecoverable struct{ err error }

func (u unrecoverable) Error() string { return u.err.Error() }
func (u unrecoverable) Unwrap() error { return u.err }

func newTask(e *Executor, a *attempt, p *plan, st Subtask) (*task, error) {
	v := p.vertices[st.Vertex]
	vp := p.parallelism[st.Vertex]
	start, end := vp.keyGroupRange(st.Index)
	return &task{
		e: e, a: a, plan: p, vertex: v, index: st.Index, parallelism: vp.Parallelism, maxP: vp.MaxParallelism,
		kgStart: start, kgEnd: end, mail: newMailbox(), watermark: stream.MinWatermark,
		metrics: newTaskMetrics(!e.cfg.DisableTaskMetrics),
		log:     e.log.With("attempt", a.id, "vertex", v.ID, "subtask", st.Index),
	}, nil
}

func (t *task) report(state core.TaskState, err error, unrec bool) {
	t.e.cfg.Reporter.TaskState(t.a.id, t.vertex.ID, t.index, string(state), err, unrec)
}

func (t *task) isFinished() bool { return t.finished.Load() }

// claim reserves checkpoint id for acknowledgement; false when it (or a later one) was
// already acknowledged.
func (t *task) claim(id int64) bool {
	t.ackMu.Lock()
	defer t.ackMu.Unlock()
	if id <= t.lastAcked {
		return false
	}
	t.lastAcked = id
	return true
}

// acked returns the highest checkpoint acknowledged.
func (t *task) acked() int64 {
	t.ackMu.Lock()
	defer t.ackMu.Unlock()
	return t.lastAcked
}

// done reports whether a subtask whose input ended may finish: at once without
// checkpointing or when finished on restore, otherwise once its final checkpoint completed.
func (t *task) done() bool {
	return t.ended && (t.endedOnRestore || !t.plan.spec.CheckpointingEnabled || t.committed)
}

// run is the subtask's goroutine.
func (t *task) run() {
	err := t.runSafe()
	if t.metrics.on {
		t.metrics.publish()
	}
	leftover := t.mail.close()
	switch {
	case err == nil:
		t.finished.Store(true)
		t.log.Info("subtask finished", "records_out", t.routerSent(), "records_in", t.processed, "final_checkpoint", t.finalCkpt)
		t.report(core.TaskFinished, nil, false)
		// A checkpoint triggered but not acknowledged (queued, or its barrier never came
		// because every producer finished first) is acknowledged with the final state.
		triggered := t.a.highestTriggered()
		for _, c := range leftover {
			if c.kind == ctlTrigger {
				triggered = max(triggered, c.checkpoint)
			}
		}
		if triggered > 0 {
			t.ackFinal(t.a.ctx, triggered)
		}
	case t.a.ctx.Err() != nil:
		t.log.Info("subtask canceled")
		t.report(core.TaskCanceled, nil, false)
	default:
		var u unrecoverable
		unrec := errors.As(err, &u)
		err = t.plan.lostPeer(err)
		t.log.Error("subtask failed", "err", err, "unrecoverable", unrec, "lost_peer", LostPeer(err))
		t.report(core.TaskFailed, err, unrec)
	}
}

func (t *task) routerSent() int64 {
	if t.router == nil {
		return 0
	}
	return t.router.sent
}

func (t *task) runSafe() (err error) {
	ctx, cancel := context.WithCancel(t.a.ctx)
	t.ctx = ctx
	var inputs sync.WaitGroup
	defer func() {
		cancel()
		inputs.Wait()
	}()
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("subtask %s#%d: panic: %v\n%s", t.vertex.ID, t.index, r, debug.Stack())
		}
	}()
	t.report(core.TaskInitializing, nil, false)
	// A change after this read reaches the subtask through its mailbox.
	t.bufferTimeout = t.e.BufferTimeout()
	if err := t.openOutputs(ctx); err != nil {
		return err
	}
	t.openInputs(ctx, &inputs)
	restore, err := t.loadRestore(ctx)
	if err != nil {
		return err
	}
	t.endedOnRestore = restore.ended()
	defer t.closeOperators()
	if err := t.openOperators(ctx, restore); err != nil {
		return err
	}
	if t.endedOnRestore {
		if err := t.snapshotRestoredFinal(); err != nil {
			return err
		}
	}
	t.report(core.TaskRunning, nil, false)
	if t.vertex.Source != nil {
		err = t.runSource(ctx)
	} else {
		err = t.runInputs(ctx)
	}
	if err != nil {
		if ctx.Err() != nil {
			return ctx.Err()
		}
		return err
	}
	return t.router.close(ctx)
}

func (t *task) openOutputs(ctx context.Context) error {
	t.router = &router{ctx: ctx, m: t.metrics}
	t.router.setBufferTimeout(t.bufferTimeout)
	var all []*netplane.Output
	defer func() { t.metrics.setOutputs(all) }()
	for _, out := range t.vertex.Outputs {
		vp := t.plan.parallelism[out.To]
		e := &edgeOut{spec: out, p: vp.Parallelism, maxP: vp.MaxParallelism, owners: t.plan.owners[out.To], rr: t.index % vp.Parallelism}
		consumers := []int{t.index}
		if out.Kind != jobgraph.Forward {
			consumers = consumers[:0]
			for k := range vp.Parallelism {
				consumers = append(consumers, k)
			}
		}
		for _, k := range consumers {
			addr, err := t.plan.address(out.To, k)
			if err != nil {
				return err
			}
			id := netplane.ChannelID{Attempt: t.a.id, Edge: stream.EdgeName(t.vertex.ID, out.To), Producer: t.index, Consumer: k}
			o, err := t.e.cfg.Plane.OpenOutput(ctx, id, addr)
			if err != nil {
				return fmt.Errorf("opening output %s to %s: %w", id, addr, err)
			}
			o.SetBufferTimeout(t.bufferTimeout)
			if out.Kind != jobgraph.Forward || len(t.vertex.Outputs) > 1 {
				o.SetBeforeWait(func() { t.router.sendOthers(o) })
			}
			e.outs = append(e.outs, o)
			e.local = append(e.local, o.Local())
			all = append(all, o)
		}
		t.router.edges = append(t.router.edges, e)
	}
	return nil
}

func (t *task) openInputs(ctx context.Context, wg *sync.WaitGroup) {
	t.events = make(chan *batch, 8)
	for _, in := range t.vertex.Inputs {
		vp := t.plan.parallelism[in.From]
		producers := []int{t.index}
		if in.Kind != jobgraph.Forward {
			producers = producers[:0]
			for j := range vp.Parallelism {
				producers = append(producers, j)
			}
		}
		for _, j := range producers {
			id := netplane.ChannelID{Attempt: t.a.id, Edge: stream.EdgeName(in.From, t.vertex.ID), Producer: j, Consumer: t.index}
			c := &inputChan{idx: len(t.inputs), in: t.e.cfg.Plane.OpenGateInput(id, len(producers)), spec: in, resume: make(chan struct{}, 1), m: t.metrics, free: make(batches, cap(t.events)+2),
				keyed: in.Kind == jobgraph.Hash}
			t.inputs = append(t.inputs, c)
		}
	}
	for _, c := range t.inputs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			c.read(ctx, t.events)
		}()
	}
}

func (t *task) runtime(opID string) stream.Runtime {
	return stream.Runtime{
		JobID: t.e.cfg.JobID, Vertex: t.vertex.ID, OperatorID: opID, Subtask: t.index, Parallelism: t.parallelism,
		MaxParallelism: t.maxP, KeyGroupStart: t.kgStart, KeyGroupEnd: t.kgEnd, Attempt: t.a.id, RunID: t.plan.spec.RunID,
		CheckpointingEnabled: t.plan.spec.CheckpointingEnabled, BufferTimeout: t.bufferTimeout,
		Logger: t.log.With("operator", opID), KeyedBackend: t.backend,
	}
}

// splitsState is the list state holding a source reader's splits.
const splitsState = "splits"

func (t *task) openOperators(ctx context.Context, restore stateSource) error {
	t.chain = t.vertex.NewChain()
	t.colls = make([]stream.Collector, len(t.chain))
	next := t.vertex.OutputCollector(t.router)
	if s, ok := next.(stream.StagedCollector); ok {
		t.router.stage = s
	}
	for i := len(t.chain) - 1; i >= 0; i-- {
		t.colls[i] = next
		next = stream.Link(t.chain[i].Operator, next)
	}
	t.head = next
	if err := t.openBackend(); err != nil {
		return err
	}
	for _, op := range t.chain {
		if err := op.Operator.Open(ctx, t.runtime(op.ID), restore.operator(op.ID)); err != nil {
			return fmt.Errorf("opening operator %q: %w", op.Name, err)
		}
	}
	if t.vertex.Source == nil {
		return nil
	}
	if t.endedOnRestore {
		t.log.Info("source ended before the restored checkpoint; reading nothing")
		return nil
	}
	rc := stream.ReaderContext{Subtask: t.index, Parallelism: t.parallelism,
		RequestSplit:      func() { t.e.cfg.Reporter.RequestSplit(t.a.id, t.vertex.ID, t.index, false) },
		RequestSplitAhead: func() { t.e.cfg.Reporter.RequestSplit(t.a.id, t.vertex.ID, t.index, true) },
	}
	reader, err := t.vertex.Source.CreateReader(rc)
	if err != nil {
		return fmt.Errorf("creating source reader: %w", err)
	}
	t.reader = reader
	t.wmGen = t.vertex.Watermarks()
	if r := restore.operator(t.vertex.ID); r != nil {
		var splits []stream.Split
		for _, it := range r.List(splitsState) {
			splits = append(splits, stream.Split(it))
		}
		if len(splits) > 0 {
			t.log.Info("restored source splits", "splits", len(splits))
			reader.AddSplits(splits)
		}
	}
	if err := reader.Start(ctx); err != nil {
		return fmt.Errorf("starting source reader: %w", err)
	}
	return nil
}

func (t *task) closeOperators() {
	if t.a.ctx.Err() != nil && (t.uploads != nil || t.backend != nil || t.restoredDB != nil) {
		// Cancelled (a rescale, a failover): nothing reads the state any more, and the
		// next attempt must not wait for it. Waiting for an in-flight checkpoint's flush
		// and the database's compactions before reporting CANCELED took 0.3-0.7 s of the
		// switch at 1 GiB; the executor waits for these closes when it closes.
		t.closeOperatorsOnly()
		t.retireBackend()
		t.e.retiring.Add(1)
		go func() {
			defer t.e.retiring.Done()
			start := time.Now()
			t.stopUploads()
			t.closeBackend()
			t.log.Info("state backend of the cancelled subtask closed", "took_ms", time.Since(start).Milliseconds())
		}()
		return
	}
	t.stopUploads()
	t.closeOperatorsOnly()
	t.closeBackend()
}

// closeOperatorsOnly closes the source reader and the chain's operators.
func (t *task) closeOperatorsOnly() {
	if t.reader != nil {
		if err := t.reader.Close(); err != nil {
			t.log.Warn("closing source reader", "err", err)
		}
	}
	for _, op := range t.chain {
		if err := op.Operator.Close(); err != nil {
			t.log.Warn("closing operator", "operator", op.Name, "err", err)
		}
	}
}

// advanceWatermark passes a watermark through the chain and on to the consumers.
func (t *task) advanceWatermark(wm int64) error {
	if wm <= t.watermark {
		return nil
	}
	t.watermark = wm
	t.metrics.setWatermark(wm)
	for i, op := range t.chain {
		if err := op.Operator.Watermark(wm, t.colls[i]); err != nil {
			return fmt.Errorf("operator %q at watermark %d: %w", op.Name, wm, err)
		}
	}
	return t.router.watermark(wm)
}

// endInput runs once when the subtask's input ended: final watermark, EndInput through the
// chain, end of data downstream. The outputs stay open: barriers of the final checkpoint
// still flow until the subtask finishes. A subtask ended on restore already did all this in
// an earlier attempt and only forwards end of data.
func (t *task) endInput(ctx context.Context) error {
	t.ended = true
	if !t.endedOnRestore {
		if err := t.advanceWatermark(stream.MaxWatermark); err != nil {
			return err
		}
		for i, op := range t.chain {
			if err := op.Operator.EndInput(ctx, t.colls[i]); err != nil {
				return fmt.Errorf("operator %q at end of input: %w", op.Name, err)
			}
		}
	}
	t.log.Info("input ended", "records_in", t.processed, "ended_on_restore", t.endedOnRestore,
		"awaiting_final_checkpoint", !t.done())
	if err := t.router.endOfData(); err != nil {
		return err
	}
	if t.vertex.Source != nil {
		// Any checkpoint triggered from now on is this subtask's final one.
		t.e.cfg.Reporter.InputEnded(t.a.id, t.vertex.ID, t.index)
	}
	return nil
}

// handleControl runs one queued call from the AM.
func (t *task) handleControl(ctx context.Context, c control) error {
	switch c.kind {
	case ctlSplits:
		if t.reader == nil {
			return nil
		}
		if len(c.splits) > 0 || !c.noMore {
			t.reader.AddSplits(c.splits) // none: a request ahead got nothing now
		}
		if c.noMore {
			t.reader.NotifyNoMoreSplits()
		}
	case ctlTrigger:
		// Sources inject the barrier; so does a subtask that no barrier can reach any more.
		if (t.vertex.Source != nil || t.inputsClosed()) && c.checkpoint > t.acked() {
			return t.checkpoint(ctx, c.checkpoint, c.timestamp)
		}
	case ctlBufferTimeout:
		return t.setBufferTimeout(c.timeout)
	case ctlComplete:
		if t.incr != nil {
			t.incr.confirm(c.checkpoint)
		}
		for _, op := range t.chain {
			if err := op.Operator.CheckpointComplete(ctx, c.checkpoint); err != nil {
				return fmt.Errorf("operator %q completing checkpoint %d: %w", op.Name, c.checkpoint, err)
			}
		}
		if l, ok := t.reader.(stream.ReaderCheckpointListener); ok {
			if err := l.NotifyCheckpointComplete(ctx, c.checkpoint); err != nil {
				return fmt.Errorf("source reader completing checkpoint %d: %w", c.checkpoint, err)
			}
		}
		if t.ended && t.finalCkpt > 0 && c.checkpoint >= t.finalCkpt && !t.committed {
			t.committed = true
			t.log.Info("final checkpoint completed", "checkpoint", c.checkpoint, "final_checkpoint", t.finalCkpt)
		}
	}
	return nil
}

// setBufferTimeout applies a reloaded execution.buffer-timeout to the subtask's output
// channels and to the operators of its chain that buffer what they emit.
func (t *task) setBufferTimeout(d time.Duration) error {
	if d == t.bufferTimeout {
		return nil
	}
	t.bufferTimeout = d
	if t.router != nil {
		t.router.setBufferTimeout(d)
		for _, e := range t.router.edges {
			for _, o := range e.outs {
				o.SetBufferTimeout(d)
			}
		}
	}
	for _, op := range t.chain {
		if s, ok := op.Operator.(stream.BufferTimeoutSetter); ok {
			if err := s.SetBufferTimeout(d); err != nil {
				return fmt.Errorf("operator %q applying execution.buffer-timeout %s: %w", op.Name, d, err)
			}
		}
	}
	t.log.Info("execution.buffer-timeout applied", "buffer_timeout", d)
	return nil
}

// inputsClosed reports whether the subtask consumes inputs and every producer finished.
func (t *task) inputsClosed() bool {
	return len(t.inputs) > 0 && t.closedInputs == len(t.inputs)
}

// handleMail serves the calls in the mailbox, then routes what they emitted.
func (t *task) handleMail(ctx context.Context) error {
	for _, c := range t.mail.take() {
		if err := t.handleControl(ctx, c); err != nil {
			return err
		}
	}
	return t.router.flushStaged()
}
