package am

import (
	"fmt"
	"net/http"
	"time"

	"github.com/tidestream/tide/api"
	"github.com/tidestream/tide/core"
)

// vertexNow is what the loop knows of one vertex for its REST answers.
type vertexNow struct {
	parallelism, maxParallelism int
	states                      map[int]core.TaskState
}

// vertexNowOf reads the vertex's parallelism and subtask states (loop goroutine).
func (a *AM) vertexNowOf(v core.VertexID) vertexNow {
	n := vertexNow{parallelism: a.sched.Parallelism()[v], maxParallelism: a.sched.MaxParallelism()[v], states: map[int]core.TaskState{}}
	if d := a.deployment; d != nil && d.attempt == a.sched.Attempt() {
		for sub, st := range d.states {
			if sub.Vertex == v {
				n.states[sub.Index] = st
			}
		}
	}
	return n
}

// vertexFor answers 404 unless the path names a vertex of the job; it returns the vertex's
// display name and what the loop knows of it.
func (a *AM) vertexFor(w http.ResponseWriter, r *http.Request) (id core.VertexID, name string, now vertexNow, ok bool) {
	graph, err := a.jobGraph()
	if err != nil {
		writeError(w, http.StatusInternalServerError, fmt.Sprintf("job graph of %s: %v", a.cfg.JobName, err))
		return "", "", now, false
	}
	id = core.VertexID(r.PathValue("vertexid"))
	var ids []string
	for _, gv := range graph.Vertices {
		if gv.ID == string(id) {
			name, ok = displayName(gv.Name, gv.ID), true
		}
		ids = append(ids, gv.ID)
	}
	if !ok {
		writeError(w, http.StatusNotFound, fmt.Sprintf("Vertex %s not found in job %s: its vertices are %v", id, a.cfg.JobID, ids))
		return "", "", now, false
	}
	if err := a.inspect(r.Context(), func() { now = a.vertexNowOf(id) }); err != nil {
		writeError(w, http.StatusServiceUnavailable, err.Error())
		return "", "", now, false
	}
	return id, name, now, true
}

// getVertex serves GET /jobs/:jobid/vertices/:vertexid: the vertex and each subtask with
// its metrics (Flink's JobVertexDetailsInfo, with tide's rates beside Flink's totals).
func (a *AM) getVertex(w http.ResponseWriter, r *http.Request) {
	id, name, now, ok := a.vertexFor(w, r)
	if !ok {
		return
	}
	byIndex := map[int]SubtaskMetrics{}
	for _, m := range a.metrics.tasks.vertex(id) {
		if m.Index < now.parallelism {
			byIndex[m.Index] = m
		}
	}
	out := api.VertexDetails{ID: string(id), Name: name, Parallelism: now.parallelism, MaxParallelism: now.maxParallelism,
		Now: a.clock.Now().UnixMilli(), Subtasks: []api.VertexSubtask{}}
	agg := &out.Aggregated
	for i := range now.parallelism {
		st := api.VertexSubtask{Subtask: i, Status: "CREATED", MetricsTimestamp: -1}
		if s, ok := now.states[i]; ok {
			st.Status = string(s)
		}
		if m, ok := byIndex[i]; ok {
			st.Attempt, st.Endpoint, st.TaskManagerID = int64(m.Attempt), string(m.Node), string(m.TaskManager)
			st.Duration, st.MetricsTimestamp, st.Metrics = m.Elapsed.Milliseconds(), m.Received.UnixMilli(), subtaskMetricsJSON(m)
			aggregate(agg, st.Metrics)
		}
		out.Subtasks = append(out.Subtasks, st)
	}
	writeJSON(w, http.StatusOK, out)
}

func subtaskMetricsJSON(m SubtaskMetrics) api.SubtaskMetrics {
	out := api.SubtaskMetrics{
		ReadBytes: m.BytesIn, ReadBytesComplete: true, WriteBytes: m.BytesOut, WriteBytesComplete: true,
		ReadRecords: m.RecordsIn, ReadRecordsComplete: true, WriteRecords: m.RecordsOut, WriteRecordsComplete: true,
		AccumulatedBackpressuredTime: m.BackPressured.Milliseconds(), AccumulatedIdleTime: m.Idle.Milliseconds(),
		AccumulatedBusyTime:  m.Busy.Milliseconds(),
		ReadRecordsPerSecond: m.RecordsInPerSecond, WriteRecordsPerSecond: m.RecordsOutPerSecond,
		ReadBytesPerSecond: m.BytesInPerSecond, WriteBytesPerSecond: m.BytesOutPerSecond,
		BusyTimeMsPerSecond: m.BusyMsPerSecond, BackPressuredTimeMsPerSecond: m.BackPressuredMsPerSecond,
		IdleTimeMsPerSecond: m.IdleMsPerSecond, CheckpointAlignmentTime: m.LastAlignment.Milliseconds(),
		StateSize: m.StateSize,
	}
	if m.HasWatermark {
		wm := m.InputWatermark
		out.CurrentInputWatermark = &wm
	}
	if len(m.SplitLag) > 0 {
		out.SplitLag = m.SplitLag
		pending := m.PendingRecords
		out.PendingRecords = &pending
	}
	return out
}

// aggregate adds one subtask's metrics to the vertex's.
func aggregate(agg *api.VertexMetrics, m api.SubtaskMetrics) {
	agg.Subtasks++
	agg.ReadRecordsPerSecond += m.ReadRecordsPerSecond
	agg.WriteRecordsPerSecond += m.WriteRecordsPerSecond
	agg.ReadBytesPerSecond += m.ReadBytesPerSecond
	agg.WriteBytesPerSecond += m.WriteBytesPerSecond
	agg.MaxBusyTimeMsPerSecond = max(agg.MaxBusyTimeMsPerSecond, m.BusyTimeMsPerSecond)
	agg.MaxBackPressuredTimeMsPerSecond = max(agg.MaxBackPressuredTimeMsPerSecond, m.BackPressuredTimeMsPerSecond)
	agg.StateSize += m.StateSize
	if wm := m.CurrentInputWatermark; wm != nil && (agg.MinInputWatermark == nil || *wm < *agg.MinInputWatermark) {
		v := *wm
		agg.MinInputWatermark = &v
	}
	if p := m.PendingRecords; p != nil {
		sum := *p
		if agg.PendingRecords != nil {
			sum += *agg.PendingRecords
		}
		agg.PendingRecords = &sum
	}
}

// getVertexBackPressure serves GET /jobs/:jobid/vertices/:vertexid/backpressure from the
// subtasks' back-pressured time per second (Flink's task-based back-pressure).
func (a *AM) getVertexBackPressure(w http.ResponseWriter, r *http.Request) {
	id, _, now, ok := a.vertexFor(w, r)
	if !ok {
		return
	}
	out := api.VertexBackPressure{Status: "deprecated", BackpressureLevel: api.BackPressureOK, EndTimestamp: -1,
		Subtasks: []api.SubtaskBackPressure{}}
	worst := 0.0
	var newest time.Time
	for _, m := range a.metrics.tasks.vertex(id) {
		if m.Index >= now.parallelism {
			continue
		}
		ratio := m.BackPressuredMsPerSecond / 1000
		out.Subtasks = append(out.Subtasks, api.SubtaskBackPressure{Subtask: m.Index, AttemptNumber: int64(m.Attempt),
			BackpressureLevel: api.BackPressureLevel(ratio), Ratio: ratio, IdleRatio: m.IdleMsPerSecond / 1000,
			BusyRatio: m.BusyMsPerSecond / 1000})
		worst = max(worst, ratio)
		if m.Received.After(newest) {
			newest = m.Received
		}
	}
	if len(out.Subtasks) > 0 {
		out.Status, out.BackpressureLevel, out.EndTimestamp = "ok", api.BackPressureLevel(worst), newest.UnixMilli()
	}
	writeJSON(w, http.StatusOK, out)
}
