package standalone

import (
	"context"
	"fmt"
	"log/slog"
	"sync"

	"github.com/tidestream/tide/core"
	"github.com/tidestream/tide/drivers"
)

// Name is the standalone driver's registry name.
const Name = "standalone"

// Driver is the passive standalone driver.
type Driver struct {
	log *slog.Logger

	mu       sync.Mutex
	started  bool
	closed   bool
	handler  drivers.EventHandler
	blocked  drivers.BlockedNodes
	workers  map[core.TaskManagerID]core.NodeID
	pending  sync.WaitGroup
	finished drivers.FinalStatus
}

var (
	_ drivers.Driver   = (*Driver)(nil)
	_ drivers.Admitter = (*Driver)(nil)
)

// New returns a standalone driver.
func New(log *slog.Logger) *Driver {
	if log == nil {
		log = slog.Default()
	}
	return &Driver{log: log, workers: map[core.TaskManagerID]core.NodeID{}}
}

// Factory returns a drivers.Factory building standalone drivers.
func Factory(log *slog.Logger) drivers.Factory {
	return func(map[string]string) (drivers.Driver, error) { return New(log), nil }
}

func (d *Driver) Name() string { return Name }

// Start records the handler and blocklist. Standalone TaskManagers survive an AM restart
// by reconnecting, so nothing is recovered here.
func (d *Driver) Start(_ context.Context, handler drivers.EventHandler, blocked drivers.BlockedNodes) ([]drivers.Worker, error) {
	d.mu.Lock()
	defer d.mu.Unlock()
	switch {
	case d.closed:
		return nil, fmt.Errorf("start standalone driver: %w", drivers.ErrClosed)
	case d.started:
		return nil, fmt.Errorf("start standalone driver: %w", drivers.ErrAlreadyStarted)
	}
	if blocked == nil {
		blocked = func(core.NodeID) bool { return false }
	}
	d.started, d.handler, d.blocked = true, handler, blocked
	return nil, nil
}

func (d *Driver) check() error { return drivers.CallState(d.started, d.closed) }

// RequestWorker always fails: a standalone cluster grows only when someone starts a
// TaskManager.
func (d *Driver) RequestWorker(context.Context, drivers.WorkerSpec) (core.TaskManagerID, error) {
	return "", fmt.Errorf("request standalone worker: %w", drivers.ErrPassive)
}

// Admit accepts a TaskManager that registered by itself, also on a blocked node: nothing
// would start a refused standalone TaskManager again, so the scheduler keeps it
// registered and unused until the block ends (as Flink's standalone TaskManagers stay).
func (d *Driver) Admit(_ context.Context, w drivers.Worker) error {
	d.mu.Lock()
	defer d.mu.Unlock()
	if err := d.check(); err != nil {
		return fmt.Errorf("admit TaskManager %s: %w", w.ID, err)
	}
	if d.blocked(w.Node) {
		d.log.Info("TaskManager on a blocked node admitted; it stays unused until the block ends", "taskmanager", w.ID, "node", w.Node)
	}
	d.workers[w.ID] = w.Node
	return nil
}

// Forget drops a worker that went away by itself (its connection broke) without
// reporting it back: the AM already knows.
func (d *Driver) Forget(id core.TaskManagerID) {
	d.mu.Lock()
	delete(d.workers, id)
	d.mu.Unlock()
}

// ReleaseWorker forgets the TaskManager and reports it terminated, always after
// ReleaseWorker returned. The AM has told the TaskManager to go already: it sends
// Disconnect on every release, whatever the driver (am/effects.go); and the AM keeps
// standalone TaskManagers (core.Options.KeepTaskManagers), so it only drops their
// connections and never calls ReleaseWorker for them.
func (d *Driver) ReleaseWorker(_ context.Context, id core.TaskManagerID) error {
	d.mu.Lock()
	if err := d.check(); err != nil {
		d.mu.Unlock()
		return fmt.Errorf("release TaskManager %s: %w", id, err)
	}
	if _, ok := d.workers[id]; !ok {
		d.mu.Unlock()
		return fmt.Errorf("release TaskManager %s: %w", id, drivers.ErrUnknownWorker)
	}
	delete(d.workers, id)
	handler := d.handler
	d.pending.Add(1)
	d.mu.Unlock()

	go func() {
		defer d.pending.Done()
		handler.OnWorkerTerminated(id, "released by the AM")
	}()
	return nil
}

// Deregister records the final status; standalone TaskManagers are told to leave by
// the AM closing their connections.
func (d *Driver) Deregister(_ context.Context, status drivers.FinalStatus, diagnostics string) error {
	d.mu.Lock()
	defer d.mu.Unlock()
	if err := d.check(); err != nil {
		return fmt.Errorf("deregister standalone application (%s): %w", status, err)
	}
	d.finished = status
	d.log.Info("standalone application deregistered", "status", status, "diagnostics", diagnostics)
	return nil
}

// Close waits for pending releases; it is idempotent.
func (d *Driver) Close(ctx context.Context) error {
	d.mu.Lock()
	d.closed = true
	d.mu.Unlock()
	done := make(chan struct{})
	go func() { d.pending.Wait(); close(done) }()
	select {
	case <-done:
		return nil
	case <-ctx.Done():
		return fmt.Errorf("close standalone driver: waiting for releases: %w", ctx.Err())
	}
}
