package api

import (
	"context"
	"net/http"
)

// RescaleVertex is one vertex's parallelism before and after a rescale.
type RescaleVertex struct {
	Vertex string `json:"vertex"`
	Before int    `json:"before"`
	After  int    `json:"after"`
}

// RescaleState is one scheduler state a rescale passed through.
type RescaleState struct {
	State    string `json:"state"`
	Enter    int64  `json:"enter"`
	Leave    int64  `json:"leave"`
	Duration int64  `json:"duration"`
}

// Rescale is one entry of GET /jobs/:jobid/rescales. Outcome is "" while it is in
// progress; times are Unix milliseconds, durations milliseconds.
type Rescale struct {
	ID       int64           `json:"id"`
	Trigger  string          `json:"trigger"`
	Cause    string          `json:"cause"`
	Outcome  string          `json:"outcome"`
	Start    int64           `json:"start"`
	End      int64           `json:"end"`
	Duration int64           `json:"duration"`
	Attempt  int64           `json:"attempt"`
	Vertices []RescaleVertex `json:"vertices"`
	States   []RescaleState  `json:"schedulerStates"`
	// KeyGroupsMoved counts the key groups whose TaskManager changed in the rescale, over
	// every vertex and every attempt it deployed.
	KeyGroupsMoved int `json:"keyGroupsMoved"`
	// BytesMoved is the state that travelled for the rescale: what the warm-up copies of
	// the moving key-group ranges fetched before the switch, plus what the new attempt's
	// subtasks downloaded from checkpoint storage to restore (RestoreDownloadedBytes).
	BytesMoved int64 `json:"bytesMoved"`
	// RestoreDownloadedBytes and RestoreLocalBytes: what the subtasks of the rescale's
	// attempt downloaded from checkpoint storage and read from their TaskManagers' local
	// state (local recovery, warm-up and standby copies) to restore; they arrive with the
	// TaskManagers' task metrics, about a second after the subtasks run.
	RestoreDownloadedBytes int64 `json:"restoreDownloadedBytes"`
	RestoreLocalBytes      int64 `json:"restoreLocalBytes"`
	// WarmupDuration is how long the move waited for its warm-ups (ms; 0: no warm-up).
	WarmupDuration int64 `json:"warmupDuration"`
	// SwitchDowntime is how long the job did not run: from the start of the switch (after
	// the warm-up) until every subtask of the new attempt ran (ms; -1 until then).
	SwitchDowntime int64 `json:"switchDowntime"`
	// Warmup details the warm-up (nil: the move did not warm up).
	Warmup *RescaleWarmup `json:"warmup,omitempty"`
}

// RescaleWarmup is what a rescale's warm-up did: copies planned (at most
// max.warmup.replicas), caught up, failed, ranges that moved without one (Skipped), and
// whether state.warmup.timeout ended it.
type RescaleWarmup struct {
	Planned  int  `json:"planned"`
	Ready    int  `json:"ready"`
	Failed   int  `json:"failed"`
	Skipped  int  `json:"skipped"`
	TimedOut bool `json:"timedOut"`
}

// Rescales is GET /jobs/:jobid/rescales: the finished rescales, oldest first, and the one
// under way (nil when none).
type Rescales struct {
	Rescales []Rescale `json:"rescales"`
	Current  *Rescale  `json:"current"`
}

// Rescales returns the job's rescale history and the rescale under way
// (GET /jobs/:jobid/rescales).
func (c *Client) Rescales(ctx context.Context, jobID string) (Rescales, error) {
	var body Rescales
	err := c.do(ctx, http.MethodGet, jobPath(jobID, "/rescales"), nil, &body)
	return body, err
}
