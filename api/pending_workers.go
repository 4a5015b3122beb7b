package api

// PendingWorker is a TaskManager the AM asked its cluster for that has not registered yet:
// one entry of pendingWorkers in GET /taskmanagers.
type PendingWorker struct {
	ID string `json:"id"`
	// Node is where the cluster placed it, "" while unplaced.
	Node string `json:"node"`
	// State is the driver's word for it: Requested, Scheduled, Running, Recreating, ...
	State string `json:"state"`
	// Reason and Message are why it waits, e.g. the Kubernetes scheduler's "Unschedulable"
	// and "0/3 nodes are available: ...".
	Reason  string `json:"reason"`
	Message string `json:"message"`
	// Requested is when it was requested, in milliseconds since the epoch.
	Requested int64 `json:"requested"`
}
