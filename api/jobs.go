package api

import (
	"context"
	"net/http"
)

// Job states as Flink spells them (JobStatus).
const (
	StateInitializing = "INITIALIZING"
	StateCreated      = "CREATED"
	StateRunning      = "RUNNING"
	StateFailing      = "FAILING"
	StateCancelling   = "CANCELLING"
	StateRestarting   = "RESTARTING"
	StateFinished     = "FINISHED"
	StateCanceled     = "CANCELED"
	StateFailed       = "FAILED"
	StateSuspended    = "SUSPENDED"
)

// IsTerminal reports whether a job in state will not run again in this AM.
func IsTerminal(state string) bool {
	switch state {
	case StateFinished, StateCanceled, StateFailed, StateSuspended:
		return true
	}
	return false
}

// JobOverview is one entry of GET /jobs/overview. Times are Unix milliseconds; EndTime is
// -1 while the job runs.
type JobOverview struct {
	JID              string `json:"jid"`
	Name             string `json:"name"`
	State            string `json:"state"`
	StartTime        int64  `json:"start-time"`
	EndTime          int64  `json:"end-time"`
	Duration         int64  `json:"duration"`
	LastModification int64  `json:"last-modification"`
	// Attempt counts the job's executions in this AM: it grows with every restart and
	// rescale.
	Attempt int64 `json:"attempt"`
}

// JobsOverview is GET /jobs/overview.
type JobsOverview struct {
	Jobs []JobOverview `json:"jobs"`
}

// JobIDStatus is one entry of GET /jobs.
type JobIDStatus struct {
	ID     string `json:"id"`
	Status string `json:"status"`
}

// JobIDsStatus is GET /jobs.
type JobIDsStatus struct {
	Jobs []JobIDStatus `json:"jobs"`
}

// JobVertex is one vertex of GET /jobs/:jobid.
type JobVertex struct {
	ID             string `json:"id"`
	Name           string `json:"name"`
	Parallelism    int    `json:"parallelism"`
	MaxParallelism int    `json:"maxParallelism"`
	Status         string `json:"status"`
	SlotSharing    string `json:"slotSharingGroupId"`
	// Tasks counts the vertex's subtasks by state (DEPLOYING, RUNNING, ...).
	Tasks map[string]int `json:"tasks"`
}

// JobDetails is GET /jobs/:jobid.
type JobDetails struct {
	JobOverview
	IsStoppable    bool             `json:"isStoppable"`
	JobType        string           `json:"job-type"`
	MaxParallelism int              `json:"maxParallelism"`
	Now            int64            `json:"now"`
	Timestamps     map[string]int64 `json:"timestamps"`
	Vertices       []JobVertex      `json:"vertices"`
	StatusCounts   map[string]int   `json:"status-counts"`
	// RestoreFrom is the checkpoint the running attempt restored, 0 for none.
	RestoreFrom int64 `json:"restoredCheckpoint"`
	DeployedAt  int64 `json:"deployed-at"`
	// PendingRescale says why a rescale waits; nil when none is pending.
	PendingRescale *PendingRescale `json:"pending-rescale,omitempty"`
	// LastFailover says how this AM took over the job a previous AM attempt ran; nil when
	// this AM started the job.
	LastFailover *LastFailover `json:"lastFailover,omitempty"`
}

// LastFailover is how an AM took over a job that a previous AM attempt ran (an AM
// failover): the subtasks that kept running adopted as they were, or restored from the
// latest checkpoint.
type LastFailover struct {
	// Outcome is PENDING (waiting for the TaskManagers' reports), ADOPTED or RESTORED.
	Outcome string `json:"outcome"`
	// Reason says why the job was restored instead ("" when adopted or pending).
	Reason string `json:"reason,omitempty"`
	// Attempt is the attempt the previous AM ran.
	Attempt int64 `json:"attempt"`
	// ReportedSubtasks of TotalSubtasks were reported by the TaskManagers.
	ReportedSubtasks int `json:"reportedSubtasks"`
	TotalSubtasks    int `json:"totalSubtasks"`
	// DecidedAfter is how long after this AM started the outcome was decided (ms; 0 while
	// pending), Timestamp when (epoch ms).
	DecidedAfter int64 `json:"decidedAfterMs"`
	Timestamp    int64 `json:"timestamp,omitempty"`
	// AdoptionTimeout is jobmanager.failover.task-adoption.timeout (ms; 0: adoption off).
	AdoptionTimeout int64 `json:"adoptionTimeoutMs"`
}

// JobStatus is GET /jobs/:jobid/status.
type JobStatus struct {
	Status string `json:"status"`
}

// Jobs returns every job of the AM (GET /jobs/overview).
func (c *Client) Jobs(ctx context.Context) ([]JobOverview, error) {
	var body JobsOverview
	if err := c.do(ctx, http.MethodGet, "/jobs/overview", nil, &body); err != nil {
		return nil, err
	}
	return body.Jobs, nil
}

// Job returns one job with its vertices (GET /jobs/:jobid).
func (c *Client) Job(ctx context.Context, jobID string) (JobDetails, error) {
	var d JobDetails
	err := c.do(ctx, http.MethodGet, jobPath(jobID, ""), nil, &d)
	return d, err
}

// JobState returns the job's state (GET /jobs/:jobid/status).
func (c *Client) JobState(ctx context.Context, jobID string) (string, error) {
	var st JobStatus
	err := c.do(ctx, http.MethodGet, jobPath(jobID, "/status"), nil, &st)
	return st.Status, err
}

// CancelJob asks the AM to cancel the job (PATCH /jobs/:jobid?mode=cancel); the AM stops
// its tasks and exits once the job is CANCELED.
func (c *Client) CancelJob(ctx context.Context, jobID string) error {
	return c.do(ctx, http.MethodPatch, jobPath(jobID, "?mode=cancel"), nil, nil)
}
