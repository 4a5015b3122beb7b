package am

import (
	"context"
	"fmt"

	"github.com/tidestream/tide/api"
	"github.com/tidestream/tide/core"
)

// jobOverview is the job's overview in snapshot s.
func (a *AM) jobOverview(s snapshot) api.JobOverview {
	now := a.clock.Now()
	end := s.End
	if end.IsZero() {
		end = now
	}
	last := s.Start
	for _, t := range s.Timestamps {
		if t.After(last) {
			last = t
		}
	}
	return api.JobOverview{JID: s.JobID, Name: s.JobName, State: string(s.Status), StartTime: millis(s.Start),
		EndTime: millis(s.End), Duration: end.Sub(s.Start).Milliseconds(), LastModification: millis(last),
		Attempt: int64(s.Attempt)}
}

// JobOverview is the job's entry of GET /jobs/overview (and its state for /jobs and
// /jobs/:jobid/status).
func (a *AM) JobOverview() api.JobOverview { return a.jobOverview(a.view.snapshot()) }

// taskStates are the subtask states every tasks map lists (Flink's ExecutionState subset).
var taskStates = []core.TaskState{core.TaskDeploying, core.TaskInitializing, core.TaskRunning,
	core.TaskFinished, core.TaskCanceled, core.TaskFailed}

// vertexState is what the loop knows of one vertex.
type vertexState struct {
	parallelism, maxParallelism int
	tasks                       map[string]int
}

// vertexStates reads each vertex's parallelism and subtask states (loop goroutine).
func (a *AM) vertexStates() map[core.VertexID]vertexState {
	par, maxP := a.sched.Parallelism(), a.sched.MaxParallelism()
	out := make(map[core.VertexID]vertexState, len(maxP))
	for v, m := range maxP {
		vs := vertexState{parallelism: par[v], maxParallelism: m, tasks: map[string]int{}}
		for _, st := range taskStates {
			vs.tasks[string(st)] = 0
		}
		out[v] = vs
	}
	if d := a.deployment; d != nil && d.attempt == a.sched.Attempt() {
		for sub, st := range d.states {
			if vs, ok := out[sub.Vertex]; ok {
				vs.tasks[string(st)]++
			}
		}
	}
	return out
}

// vertexStatus aggregates subtask states as Flink does: any failed, else any running…
func vertexStatus(tasks map[string]int, parallelism int) string {
	for _, st := range []core.TaskState{core.TaskFailed, core.TaskCanceled, core.TaskRunning, core.TaskInitializing, core.TaskDeploying} {
		if tasks[string(st)] > 0 {
			return string(st)
		}
	}
	if parallelism > 0 && tasks[string(core.TaskFinished)] == parallelism {
		return string(core.TaskFinished)
	}
	return "CREATED"
}

// JobDetails is GET /jobs/:jobid.
func (a *AM) JobDetails(ctx context.Context) (api.JobDetails, error) {
	graph, err := a.jobGraph()
	if err != nil {
		return api.JobDetails{}, fmt.Errorf("job graph of %s: %w", a.cfg.JobName, err)
	}
	var states map[core.VertexID]vertexState
	var pending core.PendingRescale
	if err := a.inspect(ctx, func() { states, pending = a.vertexStates(), a.sched.PendingRescale() }); err != nil {
		return api.JobDetails{}, unavailable(err)
	}
	s := a.view.snapshot()
	d := api.JobDetails{JobOverview: a.jobOverview(s), IsStoppable: s.Status == core.StatusRunning, JobType: string(graph.Type),
		Now: a.clock.Now().UnixMilli(), Timestamps: map[string]int64{}, StatusCounts: map[string]int{},
		RestoreFrom: int64(s.RestoreFrom), DeployedAt: millis(s.DeployedAt), Vertices: []api.JobVertex{},
		PendingRescale: pendingRescaleBody(pending), LastFailover: lastFailoverBody(s.Failover)}
	for st, t := range s.Timestamps {
		d.Timestamps[string(st)] = t.UnixMilli()
	}
	for _, gv := range graph.Vertices {
		vs := states[core.VertexID(gv.ID)]
		status := vertexStatus(vs.tasks, vs.parallelism)
		d.Vertices = append(d.Vertices, api.JobVertex{ID: gv.ID, Name: displayName(gv.Name, gv.ID), Parallelism: vs.parallelism,
			MaxParallelism: vs.maxParallelism, Status: status, SlotSharing: gv.Group(), Tasks: vs.tasks})
		d.StatusCounts[status]++
		d.MaxParallelism = max(d.MaxParallelism, vs.maxParallelism)
	}
	return d, nil
}

// CancelJob cancels the job (PATCH /jobs/:jobid?mode=cancel).
func (a *AM) CancelJob(ctx context.Context, remote string) error {
	err := a.mutate(ctx, func() { a.step(core.CancelJob{}) })
	if err != nil {
		return mutateError(err, "Job "+a.cfg.JobID+" has already terminated")
	}
	a.log.Info("cancel requested over REST", "remote", remote)
	return nil
}
