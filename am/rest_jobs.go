package am

import (
	"net/http"
	"strings"

	"github.com/tidestream/tide/core"
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
	ID             string `json:"id"`
	Name           string `json:"name"`
	Parallelism    int    `json:"parallelism"`
	MaxParallelism int    `json:"maxParallelism"`
}

type jobDetails struct {
	jobOverview
	Now         int64            `json:"now"`
	Timestamps  map[string]int64 `json:"timestamps"`
	Vertices    []jobVertex      `json:"vertices"`
	RestoreFrom int64            `json:"restoredCheckpoint"`
	DeployedAt  int64            `json:"deployed-at"`
}

// getJob serves GET /jobs/:jobid.
func (a *AM) getJob(w http.ResponseWriter, _ *http.Request) {
	s := a.view.snapshot()
	d := jobDetails{jobOverview: a.jobOverview(s), Now: a.clock.Now().UnixMilli(), Timestamps: map[string]int64{},
		RestoreFrom: int64(s.RestoreFrom), DeployedAt: millis(s.DeployedAt), Vertices: []jobVertex{}}
	for st, t := range s.Timestamps {
		d.Timestamps[string(st)] = t.UnixMilli()
	}
	for _, v := range s.Vertices {
		d.Vertices = append(d.Vertices, jobVertex{ID: string(v.Vertex), Name: string(v.Vertex), Parallelism: v.Parallelism, MaxParallelism: v.MaxParallelism})
	}
	writeJSON(w, http.StatusOK, d)
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
	if !a.post(func() { a.step(core.CancelJob{}) }) {
		writeError(w, http.StatusConflict, "Job "+a.cfg.JobID+" has already terminated")
		return
	}
	a.log.Info("cancel requested over REST", "remote", r.RemoteAddr)
	writeJSON(w, http.StatusAccepted, map[string]any{})
}
