package am

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"sync"
	"sync/atomic"
	"time"

	"google.golang.org/grpc"

	"github.com/tidestream/tide/core"
	"github.com/tidestream/tide/drivers"
	"github.com/tidestream/tide/internal/clusterauth"
	"github.com/tidestream/tide/rpc"
	"github.com/tidestream/tide/standalone"
)

// AM is one application master running one job.
type AM struct {
	cfg   Config
	log   *slog.Logger
	clock Clock
	// handOff is set when the AM stopped leaving its subtasks to the next AM (read by the
	// RPC server, which then turns TaskManagers away without telling them to exit).
	handOff atomic.Bool

	sched  *core.Scheduler
	driver drivers.Driver
	// runID tells this AM process apart from every other AM that ran the job; attempt
	// numbers start again at 1 in each, so sinks name their files with both.
	runID string

	inbox    chan func()
	loopDone chan struct{}

	// Owned by the loop goroutine.
	// held are deployments (and what follows them) put off while a checkpoint is being
	// finalized; see holdEffect.
	held       []core.Effect
	sessions   map[core.TaskManagerID]*session
	deployment *deployment
	ckpt       *checkpointCoordinator
	warm       *warmups // warm-up and standby rounds, rescale switch downtimes
	src        *sourceCoordinator
	terminated bool
	queue      []core.Event
	stepping   bool
	final      core.JobStatus
	finalCause string

	blocked blockedSet
	view    *view
	reload  *reloader // nil: live reload off

	grpc *grpc.Server
	rest *http.Server

	// api is the REST API's own state (auth, triggers, configuration in force); metrics
	// are exported on GET /metrics.
	api     *restState
	metrics *metrics

	// amState persists the blocklist, histories, checkpoint counters and start time
	// beside the checkpoints (nil without state.checkpoints.dir); stateDirty (loop) says
	// they changed since they were last handed to it.
	amState    *amStateStore
	stateDirty bool
	// recovered is the deployment the previous AM attempt ran (nil: none); deployRecord
	// the one this AM runs, persisted for the next (nil while none runs).
	recovered    *persistedDeployment
	deployRecord *persistedDeployment
	// failover is what this AM made of the recovered deployment (nil: none recovered);
	// started is when this AM process was built (failover_outcome.go).
	failover  *failoverOutcome
	started   time.Time
	persisted struct {
		version      uint64
		exception    core.ExceptionEntry
		hasException bool
	}
}

// New builds an AM; Run starts it.
func New(cfg Config) (*AM, error) {
	if err := cfg.validate(); err != nil {
		return nil, fmt.Errorf("configure AM for job %q: %w", cfg.JobName, err)
	}
	cfg.withDefaults()
	if err := clusterauth.Require(cfg.RPCListener.Addr(), cfg.InternalSecret, "the AM's RPC server (jobmanager.rpc.address)"); err != nil {
		return nil, fmt.Errorf("configure AM for job %q: %w", cfg.JobName, err)
	}
	log := cfg.Logger.With("job", cfg.JobName, "jobID", cfg.JobID)
	warnFullCopies(cfg.Options, cfg.Conf, log)
	graph, err := cfg.Job.Graph()
	if err != nil {
		return nil, fmt.Errorf("build job graph of %q: %w", cfg.JobName, err)
	}
	a := &AM{
		cfg:      cfg,
		runID:    newRunID(),
		log:      log,
		clock:    cfg.Clock,
		inbox:    make(chan func(), 1024),
		loopDone: make(chan struct{}),
		sessions: map[core.TaskManagerID]*session{},
		view:     newView(cfg.JobID, cfg.JobName, cfg.Clock.Now()),
		started:  cfg.Clock.Now(),
		warm:     newWarmups(),
	}
	a.blocked.nodes = map[core.NodeID]bool{}
	if a.api, err = newRESTState(cfg); err != nil {
		return nil, fmt.Errorf("configure REST API of job %q: %w", cfg.JobName, err)
	}
	a.metrics = newMetrics(cfg.JobID, cfg.JobName)
	if a.ckpt, err = newCheckpointCoordinator(a, cfg); err != nil {
		return nil, fmt.Errorf("configure checkpoints of job %q: %w", cfg.JobName, err)
	}
	a.src = newSourceCoordinator(cfg.Job, log)
	if a.reload, err = newReloader(a, cfg.Watch); err != nil {
		return nil, err
	}
	latest, err := a.ckpt.recover(context.Background(), graph)
	if err != nil {
		return nil, err
	}
	a.sched, err = newScheduler(graph, cfg.Options, latest, log)
	if err != nil {
		return nil, fmt.Errorf("create scheduler for job %q: %w", cfg.JobName, err)
	}
	a.amState = newAMStateStore(cfg.Storage, cfg.JobID, log)
	if err := a.restoreState(context.Background()); err != nil {
		return nil, err
	}
	a.src.open(context.Background(), cfg.Storage, cfg.JobID, a.post, func(d time.Duration, f func()) {
		a.clock.AfterFunc(d, func() { a.post(f) })
	})
	a.driver = cfg.Driver
	if a.driver == nil {
		a.driver = standalone.New(log)
	}
	var serverOpts []grpc.ServerOption
	if cfg.InternalSecret.Set() {
		serverOpts = clusterauth.NewServerAuth(cfg.InternalSecret, log).ServerOptions()
	}
	a.grpc = grpc.NewServer(serverOpts...)
	rpc.RegisterJobManagerServer(a.grpc, &rpcServer{am: a})
	if cfg.RESTListener != nil {
		a.rest = &http.Server{Handler: a.restHandler(), ReadHeaderTimeout: 10 * time.Second}
	}
	return a, nil
}

// RPCAddr is where TaskManagers connect.
func (a *AM) RPCAddr() string { return a.cfg.RPCListener.Addr().String() }

// RESTAddr is the REST API's address, or "" without one.
func (a *AM) RESTAddr() string {
	if a.cfg.RESTListener == nil {
		return ""
	}
	return a.cfg.RESTListener.Addr().String()
}

// Result is how a job ended.
type Result struct {
	Status core.JobStatus
	Cause  string
}

// Run serves TaskManagers and drives the job until it reaches a terminal status or ctx
// ends (the job is then SUSPENDED: a new AM resumes it from the latest checkpoint).
func (a *AM) Run(ctx context.Context) (Result, error) {
	var wg sync.WaitGroup
	defer wg.Wait()
	wg.Add(1)
	go func() {
		defer wg.Done()
		if err := a.grpc.Serve(a.cfg.RPCListener); err != nil && !errors.Is(err, grpc.ErrServerStopped) {
			a.log.Error("RPC server stopped", "err", err)
		}
	}()
	defer a.stopServers()
	if a.rest != nil {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if err := a.rest.Serve(a.cfg.RESTListener); err != nil && !errors.Is(err, http.ErrServerClosed) {
				a.log.Error("REST server stopped", "err", err)
			}
		}()
	}
	wg.Add(1)
	go func() {
		defer wg.Done()
		a.sampleMetrics()
	}()
	a.log.Info("AM started", "rpc", a.RPCAddr(), "rest", a.RESTAddr(), "web", a.webURL(), "driver", a.driver.Name(),
		"rpc_auth", a.cfg.InternalSecret.Set())

	recovered, err := a.driver.Start(ctx, a.driverEvents(), a.blocked.contains)
	if err != nil {
		return Result{}, fmt.Errorf("start %s driver: %w", a.driver.Name(), err)
	}
	if len(recovered) > 0 {
		a.log.Info("driver recovered workers of a previous attempt; waiting for them to register", "workers", len(recovered))
	}
	a.expectWorkers(recovered) // the loop has not started: this goroutine owns the core
	if a.reload != nil {
		watchCtx, stopWatch := context.WithCancel(ctx)
		defer stopWatch()
		wg.Add(1)
		go func() { defer wg.Done(); a.reload.run(watchCtx, a) }()
	}
	stopStateWriter := a.startStateWriter()
	res := a.loop(ctx)
	stopStateWriter()
	a.shutdown(res)
	a.lingerREST(ctx, res)
	return res, nil
}

// loop is the one goroutine that owns the core.
func (a *AM) loop(ctx context.Context) Result {
	defer close(a.loopDone)
	a.step(core.Start{})
	a.persistState()
	for !a.terminated {
		select {
		case f := <-a.inbox:
			f()
		case <-ctx.Done():
			if a.handingOff() {
				// No SuspendJob: that would cancel the subtasks the next AM adopts.
				a.log.Info("AM stopping: the subtasks keep running for the next AM to adopt", "cause", context.Cause(ctx),
					"adoption_timeout", a.cfg.Options.AdoptTimeout)
				a.handOff.Store(true)
				a.terminated, a.final, a.finalCause = true, core.StatusSuspended, "AM stopped; the next AM adopts the running subtasks"
				break
			}
			a.log.Info("AM stopping: suspending the job", "cause", context.Cause(ctx))
			a.step(core.SuspendJob{Reason: "AM shutting down"})
			if !a.terminated {
				a.terminated, a.final, a.finalCause = true, core.StatusSuspended, "AM shutting down"
			}
		}
		a.persistState()
	}
	return Result{Status: a.final, Cause: a.finalCause}
}

// post runs f on the loop goroutine; it reports false once the loop has ended.
func (a *AM) post(f func()) bool {
	select {
	case a.inbox <- f:
		return true
	case <-a.loopDone:
		return false
	}
}

// step feeds one event to the core and carries out its effects. Events raised while
// effects are being applied queue up behind the current one, so the core always sees
// its events one at a time and effects apply in the order the core returned them.
func (a *AM) step(ev core.Event) {
	a.queue = append(a.queue, ev)
	if a.stepping {
		return
	}
	a.stepping = true
	defer func() { a.stepping = false }()
	for len(a.queue) > 0 {
		next := a.queue[0]
		a.queue = a.queue[1:]
		if c, ok := next.(core.CheckpointCompleted); ok {
			a.warm.checkpointCompleted(c)
		}
		for _, eff := range a.sched.Step(a.clock.Now(), next) {
			if a.holdEffect(eff) {
				continue
			}
			a.apply(eff)
			a.noteStateEffect(eff)
		}
	}
	a.noteFailover()
}

func (a *AM) shutdown(res Result) {
	a.log.Info("job terminated", "status", res.Status, "cause", res.Cause)
	reason := fmt.Sprintf("job %s %s", a.cfg.JobName, res.Status)
	for _, s := range a.sessions {
		if a.handOff.Load() {
			// Only the stream ends: the TaskManager keeps its subtasks and reconnects to
			// the next AM, as after a crash.
			s.close(errors.New("AM stopped; the next AM adopts the running subtasks"))
			continue
		}
		msg := disconnectMsg(reason)
		msg.GetDisconnect().JobEnded = res.Status != core.StatusSuspended // TaskManagers drop the job's local state
		s.sendAndClose(msg)
	}
	a.ckpt.stop()
	a.src.stop()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if res.Status == core.StatusSuspended {
		// Suspended (the AM was told to stop, e.g. SIGTERM when YARN preempts or moves it):
		// the job is not over, so the application stays registered and the cluster may
		// start another attempt, which recovers from the latest checkpoint.
		a.log.Info("job suspended: not deregistering, a new AM attempt can resume it", "driver", a.driver.Name())
	} else {
		// No checkpoint is written any more: what the retention keeps is final, and the
		// application's diagnostics say where a kept one is.
		a.ckpt.wait()
		kept, note := a.applyCheckpointRetention(ctx, res.Status)
		if note != "" {
			res.Cause += "; " + note
		}
		if k, ok := a.driver.(pathKeeper); ok && kept != "" {
			k.Keep(kept)
		}
		if err := a.driver.Deregister(ctx, finalStatus(res.Status), res.Cause); err != nil {
			a.log.Warn("deregister failed", "driver", a.driver.Name(), "err", err)
		}
		// No attempt will resume the job: its AM state goes (its checkpoints stay).
		if err := a.amState.remove(ctx); err != nil {
			a.log.Warn("could not delete the AM state", "err", err)
		}
		if err := a.src.removeLogs(ctx); err != nil {
			a.log.Warn("could not delete the split assignment logs", "err", err)
		}
	}
	if err := a.driver.Close(ctx); err != nil {
		a.log.Warn("closing driver failed", "driver", a.driver.Name(), "err", err)
	}
	a.ckpt.wait()
}

// handingOff: the AM leaves its subtasks running for the next AM when it is stopped (see
// Config.HandOffOnStop).
func (a *AM) handingOff() bool {
	return a.cfg.HandOffOnStop && a.cfg.Options.AdoptTimeout > 0
}

func (a *AM) stopServers() {
	done := make(chan struct{})
	go func() { a.grpc.GracefulStop(); close(done) }()
	select {
	case <-done:
	case <-time.After(5 * time.Second):
		a.grpc.Stop()
	}
	if a.rest != nil {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		_ = a.rest.Shutdown(ctx)
	}
}

func finalStatus(s core.JobStatus) drivers.FinalStatus {
	switch s {
	case core.StatusFinished:
		return drivers.StatusSucceeded
	case core.StatusFailed:
		return drivers.StatusFailed
	case core.StatusCanceled:
		return drivers.StatusKilled
	}
	return drivers.StatusUndefined
}

func disconnectMsg(reason string) *rpc.JobManagerMessage {
	return &rpc.JobManagerMessage{Kind: &rpc.JobManagerMessage_Disconnect{Disconnect: &rpc.Disconnect{Reason: reason}}}
}

// blockedSet is the current blocklist, written by the loop and read by the driver.
type blockedSet struct {
	mu    sync.RWMutex
	nodes map[core.NodeID]bool
}

func (b *blockedSet) contains(n core.NodeID) bool {
	b.mu.RLock()
	defer b.mu.RUnlock()
	return b.nodes[n]
}

func (b *blockedSet) set(nodes []core.NodeID) {
	m := make(map[core.NodeID]bool, len(nodes))
	for _, n := range nodes {
		m[n] = true
	}
	b.mu.Lock()
	b.nodes = m
	b.mu.Unlock()
}

// driverEvents turns driver callbacks into core events on the loop.
func (a *AM) driverEvents() drivers.EventHandler {
	return drivers.EventFuncs{
		WorkerTerminated: func(id core.TaskManagerID, reason string) {
			a.post(func() { a.lose(id, reason) })
		},
		WorkerRequestFailed: func(reason string) {
			a.post(func() { a.step(core.WorkerRequestFailed{Reason: reason}) })
		},
		Error: func(err error) {
			a.post(func() { a.step(core.DriverFatalError{Error: err.Error()}) })
		},
	}
}
