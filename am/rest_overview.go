package am

import (
	"context"
	"maps"
	"slices"

	"github.com/tidestream/tide/api"
	"github.com/tidestream/tide/core"
	"github.com/tidestream/tide/rpc"
)

// ClusterOverview is GET /overview: TaskManagers, slots and the job's state.
func (a *AM) ClusterOverview(ctx context.Context) (api.ClusterOverview, error) {
	s := a.view.snapshot()
	var tms []core.TaskManagerInfo
	if err := a.inspect(ctx, func() { tms = a.sched.TaskManagers() }); err != nil {
		return api.ClusterOverview{}, unavailable(err)
	}
	b := api.ClusterOverview{TaskManagers: len(tms), Version: rpc.Version, Commit: rpc.BuildID()}
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
	return b, nil
}

// DashboardConfig is GET /config.
func (a *AM) DashboardConfig() api.DashboardConfig {
	return api.DashboardConfig{RefreshInterval: 3000, Version: rpc.Version, Revision: rpc.BuildID(),
		Features: api.DashboardFeatures{WebCancel: true, WebRescale: !a.cfg.Options.Reactive}}
}

// JobManagerConfig is GET /jobmanager/config: the configuration in force (live reloads
// included, secrets redacted), sorted by key.
func (a *AM) JobManagerConfig() []api.ConfigEntry {
	m := a.ConfigInForce()
	keys := slices.Sorted(maps.Keys(m))
	out := make([]api.ConfigEntry, 0, len(keys))
	for _, k := range keys {
		out = append(out, api.ConfigEntry{Key: k, Value: m[k]})
	}
	return out
}
