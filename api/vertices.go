package api

import (
	"context"
	"net/http"
	"net/url"
)

// Back-pressure levels of Flink's back-pressure endpoint: a subtask back-pressured at most
// 10% of the time is OK, at most 50% LOW, above that HIGH.
const (
	BackPressureOK   = "ok"
	BackPressureLow  = "low"
	BackPressureHigh = "high"
)

// BackPressureLevel is Flink's level of a back-pressured ratio (0..1).
func BackPressureLevel(ratio float64) string {
	switch {
	case ratio <= 0.10:
		return BackPressureOK
	case ratio <= 0.50:
		return BackPressureLow
	}
	return BackPressureHigh
}

// SubtaskMetrics are one subtask's metrics in GET /jobs/:jobid/vertices/:vertexid: Flink's
// IOMetricsInfo fields (totals of the current attempt; times in milliseconds) and tide's
// rates over the last sample interval (the TaskManagers sample every second).
type SubtaskMetrics struct {
	ReadBytes                    int64 `json:"read-bytes"`
	ReadBytesComplete            bool  `json:"read-bytes-complete"`
	WriteBytes                   int64 `json:"write-bytes"`
	WriteBytesComplete           bool  `json:"write-bytes-complete"`
	ReadRecords                  int64 `json:"read-records"`
	ReadRecordsComplete          bool  `json:"read-records-complete"`
	WriteRecords                 int64 `json:"write-records"`
	WriteRecordsComplete         bool  `json:"write-records-complete"`
	AccumulatedBackpressuredTime int64 `json:"accumulated-backpressured-time"`
	AccumulatedIdleTime          int64 `json:"accumulated-idle-time"`
	AccumulatedBusyTime          int64 `json:"accumulated-busy-time"`

	ReadRecordsPerSecond         float64 `json:"read-records-per-second"`
	WriteRecordsPerSecond        float64 `json:"write-records-per-second"`
	ReadBytesPerSecond           float64 `json:"read-bytes-per-second"`
	WriteBytesPerSecond          float64 `json:"write-bytes-per-second"`
	BusyTimeMsPerSecond          float64 `json:"busy-time-ms-per-second"`
	BackPressuredTimeMsPerSecond float64 `json:"backpressured-time-ms-per-second"`
	IdleTimeMsPerSecond          float64 `json:"idle-time-ms-per-second"`
	// CurrentInputWatermark is in milliseconds; nil before the subtask's first watermark.
	CurrentInputWatermark *int64 `json:"current-input-watermark"`
	// CheckpointAlignmentTime is how long (ms) the barriers of the last checkpoint took to
	// align at the subtask.
	CheckpointAlignmentTime int64 `json:"checkpoint-alignment-time"`
	// StateSize is the bytes of the subtask's state in its last acknowledged checkpoint.
	StateSize int64 `json:"state-size"`
	// SplitLag is the records each split of a source subtask still has to read, where the
	// source knows; PendingRecords is their sum (FLIP-33's pendingRecords).
	SplitLag       map[string]int64 `json:"split-lag,omitempty"`
	PendingRecords *int64           `json:"pending-records,omitempty"`
}

// VertexSubtask is one subtask of GET /jobs/:jobid/vertices/:vertexid.
type VertexSubtask struct {
	Subtask       int    `json:"subtask"`
	Status        string `json:"status"`
	Attempt       int64  `json:"attempt"`
	Endpoint      string `json:"endpoint"`
	TaskManagerID string `json:"taskmanager-id"`
	// Duration is how long (ms) the subtask has run, per its last metrics sample.
	Duration int64 `json:"duration"`
	// MetricsTimestamp is when the AM received the subtask's last sample; -1: none yet.
	MetricsTimestamp int64          `json:"metrics-timestamp"`
	Metrics          SubtaskMetrics `json:"metrics"`
}

// VertexMetrics sum up a vertex's subtasks: rates are summed, times per second are the
// busiest subtask's, the watermark is the lowest.
type VertexMetrics struct {
	ReadRecordsPerSecond            float64 `json:"read-records-per-second"`
	WriteRecordsPerSecond           float64 `json:"write-records-per-second"`
	ReadBytesPerSecond              float64 `json:"read-bytes-per-second"`
	WriteBytesPerSecond             float64 `json:"write-bytes-per-second"`
	MaxBusyTimeMsPerSecond          float64 `json:"max-busy-time-ms-per-second"`
	MaxBackPressuredTimeMsPerSecond float64 `json:"max-backpressured-time-ms-per-second"`
	MinInputWatermark               *int64  `json:"min-input-watermark"`
	StateSize                       int64   `json:"state-size"`
	PendingRecords                  *int64  `json:"pending-records,omitempty"`
	// Subtasks counts the subtasks with a metrics sample.
	Subtasks int `json:"subtasks-reporting"`
}

// VertexDetails is GET /jobs/:jobid/vertices/:vertexid.
type VertexDetails struct {
	ID             string          `json:"id"`
	Name           string          `json:"name"`
	Parallelism    int             `json:"parallelism"`
	MaxParallelism int             `json:"maxParallelism"`
	Now            int64           `json:"now"`
	Subtasks       []VertexSubtask `json:"subtasks"`
	Aggregated     VertexMetrics   `json:"aggregated"`
}

// SubtaskBackPressure is one subtask of GET /jobs/:jobid/vertices/:vertexid/backpressure;
// the ratios are of the last sample interval.
type SubtaskBackPressure struct {
	Subtask           int     `json:"subtask"`
	AttemptNumber     int64   `json:"attempt-number"`
	BackpressureLevel string  `json:"backpressureLevel"`
	Ratio             float64 `json:"ratio"`
	IdleRatio         float64 `json:"idleRatio"`
	BusyRatio         float64 `json:"busyRatio"`
}

// VertexBackPressure is GET /jobs/:jobid/vertices/:vertexid/backpressure (Flink's
// JobVertexBackPressureInfo). Status is "ok" once subtasks reported, "deprecated" before.
type VertexBackPressure struct {
	Status            string                `json:"status"`
	BackpressureLevel string                `json:"backpressureLevel"`
	EndTimestamp      int64                 `json:"end-timestamp"`
	Subtasks          []SubtaskBackPressure `json:"subtasks"`
}

// Vertex returns one vertex with each subtask's metrics (GET /jobs/:jobid/vertices/:vertexid).
func (c *Client) Vertex(ctx context.Context, jobID, vertexID string) (VertexDetails, error) {
	var v VertexDetails
	err := c.do(ctx, http.MethodGet, jobPath(jobID, "/vertices/"+url.PathEscape(vertexID)), nil, &v)
	return v, err
}

// VertexBackPressure returns how back-pressured each subtask of the vertex is
// (GET /jobs/:jobid/vertices/:vertexid/backpressure).
func (c *Client) VertexBackPressure(ctx context.Context, jobID, vertexID string) (VertexBackPressure, error) {
	var b VertexBackPressure
	err := c.do(ctx, http.MethodGet, jobPath(jobID, "/vertices/"+url.PathEscape(vertexID)+"/backpressure"), nil, &b)
	return b, err
}
