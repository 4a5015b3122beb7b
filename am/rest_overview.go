package am

import (
	"net/http"

	"github.com/tidestream/tide/core"
	"github.com/tidestream/tide/rpc"
)

type overviewBody struct {
	TaskManagers   int    `json:"taskmanagers"`
	SlotsTotal     int    `json:"slots-total"`
	SlotsAvailable int    `json:"slots-available"`
	JobsRunning    int    `json:"jobs-running"`
	JobsFinished   int    `json:"jobs-finished"`
	JobsCancelled  int    `json:"jobs-cancelled"`
	JobsFailed     int    `json:"jobs-failed"`
	Version        string `json:"flink-version"`
	Commit         string `json:"flink-commit"`
}

// getOverview serves GET /overview.
func (a *AM) getOverview(w http.ResponseWriter, _ *http.Request) {
	s := a.view.snapshot()
	b := overviewBody{TaskManagers: len(s.TaskManagers), Version: rpc.Version, Commit: rpc.BuildID()}
	for _, tm := range s.TaskManagers {
		b.SlotsTotal += tm.Slots
		b.SlotsAvailable += tm.Slots - s.UsedSlots[tm.ID]
	}
	switch s.Status {
	case core.StatusFinished:
		b.JobsFinished = 1
	case core.StatusCanceled:
		b.JobsCancelled = 1
	case core.StatusFailed:
		b.JobsFailed = 1
	default:
		b.JobsRunning = 1
	}
	writeJSON(w, http.StatusOK, b)
}

// getConfig serves GET /config (the dashboard configuration).
func (a *AM) getConfig(w http.ResponseWriter, _ *http.Request) {
	writeJSON(w, http.StatusOK, map[string]any{
		"refresh-interval": 3000,
		"flink-version":    rpc.Version,
		"flink-revision":   rpc.BuildID(),
		"features":         map[string]bool{"web-submit": false, "web-cancel": true, "web-rescale": false},
	})
}
