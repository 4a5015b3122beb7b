package drivers

import (
	"context"

	"github.com/tidestream/tide/core"
)

// WorkerSpec describes one worker (TaskManager) an active driver should start.
type WorkerSpec struct {
	// Slots is taskmanager.numberOfTaskSlots of the new TaskManager.
	Slots int
	// MemoryMB and CPUs size the container or pod; zero means the driver's default.
	MemoryMB int
	CPUs     float64
}

// Worker is a TaskManager process known to the driver.
type Worker struct {
	ID   core.TaskManagerID
	Node core.NodeID
}

// FinalStatus is how the application ended, reported to the cluster on Deregister
// (YARN's FinalApplicationStatus names).
type FinalStatus string

const (
	StatusSucceeded FinalStatus = "SUCCEEDED"
	StatusFailed    FinalStatus = "FAILED"
	StatusKilled    FinalStatus = "KILLED"
	StatusUndefined FinalStatus = "UNDEFINED"
)

// FinalStatuses lists every FinalStatus, for conformance tests.
var FinalStatuses = []FinalStatus{StatusSucceeded, StatusFailed, StatusKilled, StatusUndefined}

// BlockedNodes reports whether a node is blocked right now. The AM hands it to the
// driver at Start; the driver consults it on every request and admission, so it always
// sees the current blocklist without being told about each change.
type BlockedNodes func(node core.NodeID) bool

// Driver is the AM's view of a cluster resource manager. Every call takes a context;
// every method is safe for concurrent use.
type Driver interface {
	// Name is the driver's registry name ("standalone", "yarn", "kube").
	Name() string
	// Start connects to the cluster and returns the workers recovered from a previous
	// attempt of the AM (empty on a first attempt). Events go to handler from then on.
	Start(ctx context.Context, handler EventHandler, blocked BlockedNodes) ([]Worker, error)
	// RequestWorker asks for one more worker; passive drivers return ErrPassive.
	RequestWorker(ctx context.Context, spec WorkerSpec) (core.TaskManagerID, error)
	// ReleaseWorker stops (or disconnects) a worker. Its OnWorkerTerminated event
	// arrives only after ReleaseWorker has returned.
	ReleaseWorker(ctx context.Context, id core.TaskManagerID) error
	// Deregister tells the cluster the application ended with status.
	Deregister(ctx context.Context, status FinalStatus, diagnostics string) error
	// Close releases the driver's own resources; it is idempotent.
	Close(ctx context.Context) error
}

// Admitter is implemented by drivers whose workers are started outside the AM
// (standalone): the AM asks it before accepting a TaskManager's registration.
type Admitter interface {
	// Admit accepts a worker that registered by itself, or refuses it (ErrBlocked for a
	// worker on a blocked node).
	Admit(ctx context.Context, w Worker) error
}
