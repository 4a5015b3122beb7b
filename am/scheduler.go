package am

import (
	"log/slog"

	"github.com/tidestream/tide/core"
	"github.com/tidestream/tide/core/jobgraph"
)

func newScheduler(graph *jobgraph.JobGraph, opts core.Options, latest core.CheckpointID, log *slog.Logger) (*core.Scheduler, error) {
	return core.New(core.Config{
		Graph:            *graph,
		Options:          opts,
		Logger:           log,
		LatestCheckpoint: latest,
	})
}
