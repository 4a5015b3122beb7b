package am

import (
	"context"
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

// vertexFor finds vertex vid of the job (404 when there is none) and returns its display
// name and what the loop knows of it.
func (a *AM) vertexFor(ctx context.Context, vid string) (id core.VertexID, name string, now vertexNow, err error) {
	graph, err := a.jobGraph()
	if err != nil {
		return "", "", now, fmt.Errorf("job graph of %s: %w", a.cfg.JobName, err)
	}
	id = core.VertexID(vid)
	var ids []string
	found := false
	for _, gv := range graph.Vertices {
		if gv.ID == vid {
			name, found = displayName(gv.Name, gv.ID), true
		}
		ids = append(ids, gv.ID)
	}
	if !found {
		return "", "", now, statusErrorf(http.StatusNotFound, "Vertex %s not found in job %s: its vertices are %v", vid, a.cfg.JobID, ids)
	}
	if err := a.inspect(ctx, func() { now = a.vertexNowOf(id) }); err != nil {
		return "", "", now, unavailable(err)
	}
	return id, name, now, nil
}

// Vertex is GET /jobs/:jobid/vertices/:vertexid: the vertex and each subtask with its
// metrics (Flink's JobVertexDetailsInfo, with tide's rates beside Flink's totals).
func (a *AM) Vertex(ctx context.Context, vid string) (api.VertexDetails, error) {
	id, name, now, err := a.vertexFor(ctx, vid)
	if err != nil {
		return api.VertexDetails{}, err
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
	return out, nil
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

// VertexBackPressure is GET /jobs/:jobid/vertices/:vertexid/backpressure, from the
// subtasks' back-pressured time per second (Flink's task-based back-pressure).
func (a *AM) VertexBackPressure(ctx context.Context, vid string) (api.VertexBackPressure, error) {
	id, _, now, err := a.vertexFor(ctx, vid)
	if err != nil {
		return api.VertexBackPressure{}, err
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
	return out, nil
}
