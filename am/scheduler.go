package am

import (
	"log/slog"
	"slices"

	"github.com/tidestream/tide/core"
	"github.com/tidestream/tide/core/jobgraph"
	"github.com/tidestream/tide/drivers"
)

func newScheduler(graph *jobgraph.JobGraph, opts core.Options, latest core.CheckpointID, log *slog.Logger) (*core.Scheduler, error) {
	return core.New(core.Config{
		Graph:            *graph,
		Options:          opts,
		Logger:           log,
		LatestCheckpoint: latest,
	})
}

// expectWorkers tells the core which TaskManagers are on their way before the job starts:
// the workers the driver adopted from a previous attempt (they re-register) and those a
// launcher started together with the AM. The first deployment waits for them, bounded by
// the submission stabilization timeout (loop goroutine, before Start).
func (a *AM) expectWorkers(recovered []drivers.Worker) {
	ids := slices.Clone(a.cfg.ExpectedTaskManagers)
	for _, w := range recovered {
		ids = append(ids, w.ID)
	}
	if len(ids) == 0 {
		return
	}
	a.log.Info("waiting for TaskManagers on their way before the first deployment",
		"recovered", len(recovered), "launched", len(a.cfg.ExpectedTaskManagers))
	a.step(core.WorkersExpected{TaskManagers: ids})
}
