package testkit

// CheckpointStats is GET /jobs/:id/checkpoints with the fields the tests read.
type CheckpointStats struct {
	Counts struct {
		InProgress int64 `json:"in_progress"`
		Restored   int64 `json:"restored"`
		Completed  int64 `json:"completed"`
		Failed     int64 `json:"failed"`
	} `json:"counts"`
	Latest struct {
		Completed *struct {
			ID      int64 `json:"id"`
			Attempt int64 `json:"attempt"`
		} `json:"completed"`
		Failed *struct {
			ID             int64  `json:"id"`
			FailureMessage string `json:"failure_message"`
		} `json:"failed"`
		Restored *struct {
			ID           int64  `json:"id"`
			ExternalPath string `json:"external_path"`
		} `json:"restored"`
	} `json:"latest"`
	History []struct {
		ID      int64  `json:"id"`
		Attempt int64  `json:"attempt"`
		Status  string `json:"status"`
	} `json:"history"`
}
