package am

import (
	"fmt"
	"net/http"
	"strings"

	"github.com/tidestream/tide/core"

	"github.com/tidestream/tide/api"
)

type jobOverview struct {
	JID              string `json:"jid"`
	Name             string `json:"name"`
	State            string `json:"state"`
	StartTime        int64  `json:"start-time"`
	EndTime          int64  `json:"end-time"`
	Duration         int64  `json:"duration"`
	LastModification int64  `json:"last-modification"`
	Attempt          int64  `json:"attempt"`
}

func (a *AM) jobOverview(s snapshot) jobOverview {
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
	return jobOverview{JID: s.JobID, Name: s.JobName, State: string(s.Status), StartTime: millis(s.Start),
		EndTime: millis(s.End), Duration: end.Sub(s.Start).Milliseconds(), LastModification: millis(last),
		Attempt: int64(s.Attempt)}
}

// getJobs serves GET /jobs.
func (a *AM) getJobs(w http.ResponseWriter, _ *http.Request) {
	s := a.view.snapshot()
	writeJSON(w, http.StatusOK, map[string]any{"jobs": []map[string]string{{"id": s.JobID, "status": string(s.Status)}}})
}

// getJobsOverview serves GET /jobs/overview.
func (a *AM) getJobsOverview(w http.ResponseWriter, _ *http.Request) {
	writeJSON(w, http.StatusOK, map[string]any{"jobs": []jobOverview{a.jobOverview(a.view.snapshot())}})
}

type jobVertex struct {
	ID             string         `json:"id"`
	Name           string         `json:"name"`
	Parallelism    int            `json:"parallelism"`
	MaxParallelism int            `json:"maxParallelism"`
	Status         string         `json:"status"`
	SlotSharing    string         `json:"slotSharingGroupId"`
	Tasks          map[string]int `json:"tasks"`
}

type jobDetails struct {
	jobOverview
	IsStoppable    bool                `json:"isStoppable"`
	JobType        string              `json:"job-type"`
	MaxParallelism int                 `json:"maxParallelism"`
	Now            int64               `json:"now"`
	Timestamps     map[string]int64    `json:"timestamps"`
	Vertices       []jobVertex         `json:"vertices"`
	StatusCounts   map[string]int      `json:"status-counts"`
	RestoreFrom    int64               `json:"restoredCheckpoint"`
	DeployedAt     int64               `json:"deployed-at"`
	PendingRescale *api.PendingRescale `json:"pending-rescale,omitempty"`
}

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

// getJob serves GET /jobs/:jobid.
func (a *AM) getJob(w http.ResponseWriter, r *http.Request) {
	graph, err := a.jobGraph()
	if err != nil {
		writeError(w, http.StatusInternalServerError, fmt.Sprintf("job graph of %s: %v", a.cfg.JobName, err))
		return
	}
	var states map[core.VertexID]vertexState
	var pending core.PendingRescale
	if err := a.inspect(r.Context(), func() { states, pending = a.vertexStates(), a.sched.PendingRescale() }); err != nil {
		writeError(w, http.StatusServiceUnavailable, err.Error())
		return
	}
	s := a.view.snapshot()
	d := jobDetails{jobOverview: a.jobOverview(s), IsStoppable: s.Status == core.StatusRunning, JobType: string(graph.Type),
		Now: a.clock.Now().UnixMilli(), Timestamps: map[string]int64{}, StatusCounts: map[string]int{},
		RestoreFrom: int64(s.RestoreFrom), DeployedAt: millis(s.DeployedAt), Vertices: []jobVertex{},
		PendingRescale: pendingRescaleBody(pending)}
	for st, t := range s.Timestamps {
		d.Timestamps[string(st)] = t.UnixMilli()
	}
	for _, gv := range graph.Vertices {
		vs := states[core.VertexID(gv.ID)]
		status := vertexStatus(vs.tasks, vs.parallelism)
		d.Vertices = append(d.Vertices, jobVertex{ID: gv.ID, Name: displayName(gv.Name, gv.ID), Parallelism: vs.parallelism,
			MaxParallelism: vs.maxParallelism, Status: status, SlotSharing: gv.Group(), Tasks: vs.tasks})
		d.StatusCounts[status]++
		d.MaxParallelism = max(d.MaxParallelism, vs.maxParallelism)
	}
	writeJSON(w, http.StatusOK, d)
}

func displayName(name, id string) string {
	if name == "" {
		return id
	}
	return name
}

// getJobStatus serves GET /jobs/:jobid/status.
func (a *AM) getJobStatus(w http.ResponseWriter, _ *http.Request) {
	writeJSON(w, http.StatusOK, map[string]string{"status": string(a.view.snapshot().Status)})
}

// patchJob serves PATCH /jobs/:jobid?mode=cancel (Flink's "terminate job").
func (a *AM) patchJob(w http.ResponseWriter, r *http.Request) {
	mode := r.URL.Query().Get("mode")
	if mode == "" {
		mode = "cancel"
	}
	if !strings.EqualFold(mode, "cancel") {
		writeError(w, http.StatusBadRequest, "Invalid mode "+mode+": expected cancel")
		return
	}
	err := a.mutate(r.Context(), func() { a.step(core.CancelJob{}) })
	if writeMutateError(w, err, "Job "+a.cfg.JobID+" has already terminated") {
		return
	}
	a.log.Info("cancel requested over REST", "remote", r.RemoteAddr)
	writeJSON(w, http.StatusAccepted, map[string]any{})
}
