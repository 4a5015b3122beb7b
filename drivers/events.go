package drivers

import "github.com/tidestream/tide/core"

// EventHandler receives what a driver learns about the cluster. The AM implements it
// by turning each call into a core event on its event loop; implementations must not
// block for long.
type EventHandler interface {
	// OnWorkerTerminated: a worker is gone (released, killed, container completed).
	OnWorkerTerminated(id core.TaskManagerID, reason string)
	// OnWorkerRequestFailed: a RequestWorker could not be satisfied after it returned.
	OnWorkerRequestFailed(reason string)
	// OnError: the driver cannot go on; the job fails.
	OnError(err error)
}

// EventFuncs adapts plain functions to EventHandler; nil fields ignore their event.
type EventFuncs struct {
	WorkerTerminated    func(id core.TaskManagerID, reason string)
	WorkerRequestFailed func(reason string)
	Error               func(err error)
}

var _ EventHandler = EventFuncs{}

func (f EventFuncs) OnWorkerTerminated(id core.TaskManagerID, reason string) {
	if f.WorkerTerminated != nil {
		f.WorkerTerminated(id, reason)
	}
}

func (f EventFuncs) OnWorkerRequestFailed(reason string) {
	if f.WorkerRequestFailed != nil {
		f.WorkerRequestFailed(reason)
	}
}

func (f EventFuncs) OnError(err error) {
	if f.Error != nil {
		f.Error(err)
	}
}
