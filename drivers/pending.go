package drivers

import (
	"time"

	"github.com/tidestream/tide/core"
)

// PendingWorker is a worker the AM requested that has not registered yet, as its driver
// sees it: where it is and, when the cluster says so, why it waits (for a Kubernetes pod the
// scheduler's PodScheduled=False reason and message, such as Unschedulable "0/3 nodes are
// available: 3 node(s) didn't match Pod's node affinity/selector").
type PendingWorker struct {
	ID core.TaskManagerID
	// Node is where the cluster placed it; empty while it is not placed.
	Node core.NodeID
	// State is the driver's word for where the worker is: Requested, Scheduled, Running,
	// Recreating, ...
	State string
	// Reason and Message say why it waits; both empty when nothing is known.
	Reason, Message string
	// Since is when the driver requested (or adopted) it.
	Since time.Time
}

// PendingLister is a driver that can list its pending workers (GET /taskmanagers shows
// them beside the registered ones). Drivers that start no workers need not implement it.
type PendingLister interface {
	PendingWorkers() []PendingWorker
}
