package am

import (
	"maps"
	"net/http"
	"slices"

	"github.com/tidestream/tide/core"
	"github.com/tidestream/tide/rpc"
)

type overviewBody struct {
	TaskManagers        int    `json:"taskmanagers"`
	TaskManagersBlocked int    `json:"taskmanagers-blocked"`
	SlotsTotal          int    `json:"slots-total"`
	SlotsAvailable      int    `json:"slots-available"`
	SlotsFreeAndBlocked int    `json:"slots-free-and-blocked"`
	JobsRunning         int    `json:"jobs-running"`
	JobsFinished        int    `json:"jobs-finished"`
	JobsCancelled       int    `json:"jobs-cancelled"`
	JobsFailed          int    `json:"jobs-failed"`
	Version             string `json:"flink-version"`
	Commit              string `json:"flink-commit"`
}

// getOverview serves GET /overview.
func (a *AM) getOverview(w http.ResponseWriter, r *http.Request) {
	s := a.view.snapshot()
	var tms []core.TaskManagerInfo
	if err := a.inspect(r.Context(), func() { tms = a.sched.TaskManagers() }); err != nil {
		writeError(w, http.StatusServiceUnavailable, err.Error())
		return
	}
	b := overviewBody{TaskManagers: len(tms), Version: rpc.Version, Commit: rpc.BuildID()}
	for _, tm := range tms {
		b.SlotsTotal += tm.Slots
		if tm.Blocked {
			b.TaskManagersBlocked++
			b.SlotsFreeAndBlocked += tm.Free
			continue
		}
		b.SlotsAvailable += tm.Free
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
		"features":         map[string]bool{"web-submit": false, "web-cancel": true, "web-rescale": !a.cfg.Options.Reactive},
	})
}

type configEntry struct {
	Key   string `json:"key"`
	Value string `json:"value"`
}

// getJobManagerConfig serves GET /jobmanager/config: the configuration in force (live
// reloads included, secrets redacted) as Flink's list of {key, value}, sorted by key.
func (a *AM) getJobManagerConfig(w http.ResponseWriter, _ *http.Request) {
	m := a.ConfigInForce()
	keys := slices.Sorted(maps.Keys(m))
	out := make([]configEntry, 0, len(keys))
	for _, k := range keys {
		out = append(out, configEntry{Key: k, Value: m[k]})
	}
	writeJSON(w, http.StatusOK, out)
}
