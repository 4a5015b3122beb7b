package api

import (
	"context"
	"encoding/json"
	"net/http"
	"net/url"
	"strings"
)

// Asynchronous operation states (Flink's QueueStatus); tide reports a failed operation as
// FAILED, Flink as COMPLETED with a failure cause: Operation.Failure reads both.
const (
	OperationInProgress = "IN_PROGRESS"
	OperationCompleted  = "COMPLETED"
	OperationFailed     = "FAILED"
)

// CheckpointTriggerRequest is the body of POST /jobs/:jobid/checkpoints. CheckpointType
// is CONFIGURED (default) or FULL; TriggerID (optional) makes the request idempotent.
type CheckpointTriggerRequest struct {
	CheckpointType string `json:"checkpointType,omitempty"`
	TriggerID      string `json:"triggerId,omitempty"`
}

// SavepointTriggerRequest is the body of POST /jobs/:jobid/savepoints. An empty
// TargetDirectory means the AM's state.savepoints.dir; CancelJob cancels the job once the
// savepoint is complete; FormatType is CANONICAL or NATIVE.
type SavepointTriggerRequest struct {
	TargetDirectory string `json:"target-directory,omitempty"`
	CancelJob       bool   `json:"cancel-job"`
	FormatType      string `json:"formatType,omitempty"`
	TriggerID       string `json:"triggerId,omitempty"`
}

// StopRequest is the body of POST /jobs/:jobid/stop: a savepoint, then the job is
// cancelled. Drain is refused: tide's sources are unbounded.
type StopRequest struct {
	TargetDirectory string `json:"targetDirectory,omitempty"`
	Drain           bool   `json:"drain,omitempty"`
	FormatType      string `json:"formatType,omitempty"`
	TriggerID       string `json:"triggerId,omitempty"`
}

// TriggerResponse is the answer to starting an operation: its trigger id for polling.
type TriggerResponse struct {
	RequestID string `json:"request-id"`
}

// QueueStatus is the status of an asynchronous operation.
type QueueStatus struct {
	ID string `json:"id"`
}

// AsyncOperation is the answer to polling an operation by trigger id. Operation is nil
// while the status is IN_PROGRESS.
type AsyncOperation struct {
	Status    QueueStatus      `json:"status"`
	Operation *OperationResult `json:"operation,omitempty"`
}

// FailureCause is Flink's serialized throwable.
type FailureCause struct {
	Class      string `json:"class"`
	Message    string `json:"message,omitempty"`
	StackTrace string `json:"stack-trace"`
}

// OperationResult is the operation of a finished checkpoint, savepoint or stop.
type OperationResult struct {
	CheckpointID int64         `json:"checkpointId,omitempty"`
	Location     string        `json:"location,omitempty"`
	FailureCause *FailureCause `json:"failure-cause,omitempty"`
}

// Done reports whether the operation has finished, well or not.
func (o AsyncOperation) Done() bool {
	return o.Status.ID != OperationInProgress && o.Status.ID != ""
}

// Failure returns why a finished operation failed, "" when it succeeded.
func (o AsyncOperation) Failure() string {
	if r := o.Operation; r != nil && r.FailureCause != nil {
		c := r.FailureCause
		for _, m := range []string{c.Message, firstLine(c.StackTrace), c.Class} {
			if m != "" {
				return m
			}
		}
		return "failed"
	}
	if o.Done() && o.Status.ID != OperationCompleted {
		return "status " + o.Status.ID
	}
	return ""
}

// UnmarshalJSON accepts a failure cause given as a plain string too.
func (c *FailureCause) UnmarshalJSON(data []byte) error {
	var s string
	if json.Unmarshal(data, &s) == nil {
		*c = FailureCause{Message: s}
		return nil
	}
	type plain FailureCause
	return json.Unmarshal(data, (*plain)(c))
}

func firstLine(s string) string {
	line, _, _ := strings.Cut(strings.TrimSpace(s), "\n")
	return line
}

// TriggerCheckpoint starts a checkpoint now, or joins the one in flight
// (POST /jobs/:jobid/checkpoints), and returns its trigger id.
func (c *Client) TriggerCheckpoint(ctx context.Context, jobID string, req CheckpointTriggerRequest) (string, error) {
	var t TriggerResponse
	err := c.do(ctx, http.MethodPost, jobPath(jobID, "/checkpoints"), req, &t)
	return t.RequestID, err
}

// CheckpointOperation polls a triggered checkpoint (GET /jobs/:jobid/checkpoints/:triggerid).
func (c *Client) CheckpointOperation(ctx context.Context, jobID, triggerID string) (AsyncOperation, error) {
	var o AsyncOperation
	err := c.do(ctx, http.MethodGet, jobPath(jobID, "/checkpoints/"+url.PathEscape(triggerID)), nil, &o)
	return o, err
}

// TriggerSavepoint starts a savepoint (POST /jobs/:jobid/savepoints) and returns its
// trigger id.
func (c *Client) TriggerSavepoint(ctx context.Context, jobID string, req SavepointTriggerRequest) (string, error) {
	var t TriggerResponse
	err := c.do(ctx, http.MethodPost, jobPath(jobID, "/savepoints"), req, &t)
	return t.RequestID, err
}

// StopWithSavepoint takes a savepoint and then cancels the job (POST /jobs/:jobid/stop);
// poll it with SavepointOperation.
func (c *Client) StopWithSavepoint(ctx context.Context, jobID string, req StopRequest) (string, error) {
	var t TriggerResponse
	err := c.do(ctx, http.MethodPost, jobPath(jobID, "/stop"), req, &t)
	return t.RequestID, err
}

// SavepointOperation polls a savepoint or stop (GET /jobs/:jobid/savepoints/:triggerid).
func (c *Client) SavepointOperation(ctx context.Context, jobID, triggerID string) (AsyncOperation, error) {
	var o AsyncOperation
	err := c.do(ctx, http.MethodGet, jobPath(jobID, "/savepoints/"+url.PathEscape(triggerID)), nil, &o)
	return o, err
}
