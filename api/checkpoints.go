package api

import (
	"context"
	"net/http"
	"strconv"
)

// CheckpointCounts are the counts of GET /jobs/:jobid/checkpoints.
type CheckpointCounts struct {
	Restored   int64 `json:"restored"`
	Total      int64 `json:"total"`
	InProgress int64 `json:"in_progress"`
	Completed  int64 `json:"completed"`
	Failed     int64 `json:"failed"`
}

// CheckpointStatistics is one checkpoint of the history (and of
// GET /jobs/:jobid/checkpoints/details/:id).
type CheckpointStatistics struct {
	ID                      int64  `json:"id"`
	Attempt                 int64  `json:"attempt"`
	Status                  string `json:"status"`
	IsSavepoint             bool   `json:"is_savepoint"`
	CheckpointType          string `json:"checkpoint_type"` // CHECKPOINT or SAVEPOINT
	SavepointFormat         string `json:"savepointFormat,omitempty"`
	TriggerTimestamp        int64  `json:"trigger_timestamp"`
	LatestAckTimestamp      int64  `json:"latest_ack_timestamp"`
	StateSize               int64  `json:"state_size"`
	EndToEndDuration        int64  `json:"end_to_end_duration"`
	NumSubtasks             int    `json:"num_subtasks"`
	NumAcknowledgedSubtasks int    `json:"num_acknowledged_subtasks"`
	FailureTimestamp        int64  `json:"failure_timestamp,omitempty"`
	FailureMessage          string `json:"failure_message,omitempty"`
}

// RestoredCheckpoint is the checkpoint the job last restored.
type RestoredCheckpoint struct {
	ID               int64  `json:"id"`
	RestoreTimestamp int64  `json:"restore_timestamp"`
	IsSavepoint      bool   `json:"is_savepoint"`
	ExternalPath     string `json:"external_path"`
}

// LatestCheckpoints are the latest completed, savepoint, failed and restored checkpoints.
type LatestCheckpoints struct {
	Completed *CheckpointStatistics `json:"completed"`
	Savepoint *CheckpointStatistics `json:"savepoint"`
	Failed    *CheckpointStatistics `json:"failed"`
	Restored  *RestoredCheckpoint   `json:"restored"`
}

// CheckpointingStatistics is GET /jobs/:jobid/checkpoints.
type CheckpointingStatistics struct {
	Counts  CheckpointCounts       `json:"counts"`
	Latest  LatestCheckpoints      `json:"latest"`
	History []CheckpointStatistics `json:"history"`
}

// Checkpoints returns the job's checkpoint statistics (GET /jobs/:jobid/checkpoints).
func (c *Client) Checkpoints(ctx context.Context, jobID string) (CheckpointingStatistics, error) {
	var s CheckpointingStatistics
	err := c.do(ctx, http.MethodGet, jobPath(jobID, "/checkpoints"), nil, &s)
	return s, err
}

// Checkpoint returns one checkpoint of the statistics' history
// (GET /jobs/:jobid/checkpoints/details/:id).
func (c *Client) Checkpoint(ctx context.Context, jobID string, id int64) (CheckpointStatistics, error) {
	var s CheckpointStatistics
	err := c.do(ctx, http.MethodGet, jobPath(jobID, "/checkpoints/details/"+strconv.FormatInt(id, 10)), nil, &s)
	return s, err
}

// Externalization says whether checkpoints are kept outside the job.
type Externalization struct {
	Enabled              bool `json:"enabled"`
	DeleteOnCancellation bool `json:"delete_on_cancellation"`
}

// CheckpointConfig is GET /jobs/:jobid/checkpoints/config: the settings in force, live
// reloads included. Durations are milliseconds; Interval is -1 when periodic checkpoints
// are off.
type CheckpointConfig struct {
	Mode               string          `json:"mode"`
	Interval           int64           `json:"interval"`
	Timeout            int64           `json:"timeout"`
	MinPause           int64           `json:"min_pause"`
	MaxConcurrent      int             `json:"max_concurrent"`
	CheckpointsEnabled bool            `json:"checkpoints_enabled"`
	Externalization    Externalization `json:"externalization"`
	StateBackend       string          `json:"state_backend"`
	CheckpointStorage  string          `json:"checkpoint_storage"`
	NumRetained        int             `json:"num_retained"`
}

// CheckpointConfig returns the checkpoint settings in force
// (GET /jobs/:jobid/checkpoints/config).
func (c *Client) CheckpointConfig(ctx context.Context, jobID string) (CheckpointConfig, error) {
	var cc CheckpointConfig
	err := c.do(ctx, http.MethodGet, jobPath(jobID, "/checkpoints/config"), nil, &cc)
	return cc, err
}
