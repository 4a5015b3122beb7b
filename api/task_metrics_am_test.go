package api_test

import (
	"context"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/tidestream/tide/api"
	"github.com/tidestream/tide/internal/testkit"
	"github.com/tidestream/tide/stream"
)

const slowSinkJob = "SlowSinkForTaskMetrics"

func init() { stream.Register(slowSinkJob, buildSlowSinkJob) }

// buildSlowSinkJob: an unlimited source of event-time numbers in two bounded partitions (so
// their lag is known), keyed counts, and a sink that takes a millisecond a record. The
// counts and the sink share a vertex; the source is the vertex upstream of it.
func buildSlowSinkJob([]string) (*stream.Job, error) {
	job := stream.NewJob(slowSinkJob, 1, 0)
	nums := stream.GeneratorSource(job, "numbers", stream.Generator[int64]{Partitions: 2, PerPartition: 1 << 40,
		Next: func(_ int, seq int64, _ []byte) (int64, int64, []byte) { return seq, seq, nil }},
		stream.BoundedOutOfOrderness(0, func(v int64) int64 { return v }))
	counts := stream.Reduce(stream.KeyBy(nums, func(v int64) int64 { return v % 16 }), "count",
		func(acc, v int64) int64 { return acc + 1 })
	stream.Sink(counts, "slow-sink", func() stream.Operator { return &slowSink{} })
	return job, nil
}

type slowSink struct{ stream.BaseOperator }

func (*slowSink) Process(any, int64, stream.Collector) error {
	time.Sleep(time.Millisecond)
	return nil
}

// TestTaskMetricsEndToEnd runs a job whose sink is slow in a real AM and TaskManager:
// the rates move, the slow vertex is busy, the source upstream of it is back-pressured,
// and the watermark, state size and split lag arrive; /metrics exports them per subtask.
func TestTaskMetricsEndToEnd(t *testing.T) {
	c := startJob(t, slowSinkJob, nil)
	ctx := t.Context()
	var job api.JobDetails
	testkit.WaitFor(t, "the job RUNNING", func() (bool, error) {
		var err error
		job, err = c.Job(ctx, jobID)
		return err == nil && job.State == api.StateRunning && len(job.Vertices) == 2 && job.Vertices[1].Tasks["RUNNING"] == 1, err
	})
	source, sink := job.Vertices[0].ID, job.Vertices[1].ID
	if !strings.Contains(job.Vertices[0].Name, "numbers") {
		t.Fatalf("vertices %+v: want the source first", job.Vertices)
	}

	// The source is back-pressured (HIGH) by the slow vertex, which is busy.
	testkit.WaitFor(t, "back-pressure HIGH at the source, the sink vertex busy", func() (bool, error) {
		bp, err := c.VertexBackPressure(ctx, jobID, source)
		if err != nil {
			return false, err
		}
		down, err := c.Vertex(ctx, jobID, sink)
		if err != nil {
			return false, err
		}
		if bp.Status != "ok" || bp.BackpressureLevel != api.BackPressureHigh || len(bp.Subtasks) != 1 {
			return false, fmt.Errorf("source back-pressure %+v", bp)
		}
		if busy := down.Aggregated.MaxBusyTimeMsPerSecond; busy < 500 {
			return false, fmt.Errorf("sink vertex busy %.0f ms/s", busy)
		}
		return true, nil
	})
	sinkBP, err := c.VertexBackPressure(ctx, jobID, sink)
	if err != nil || sinkBP.BackpressureLevel != api.BackPressureOK {
		t.Errorf("the sink vertex, with nothing downstream, is back-pressured: %+v %v", sinkBP, err)
	}

	// Rates move: records flow at a positive rate, and the totals grow between samples.
	first, err := c.Vertex(ctx, jobID, sink)
	if err != nil {
		t.Fatal(err)
	}
	testkit.WaitFor(t, "the sink vertex's records, watermark and state size to advance", func() (bool, error) {
		v, err := c.Vertex(ctx, jobID, sink)
		if err != nil {
			return false, err
		}
		m, m0 := v.Subtasks[0].Metrics, first.Subtasks[0].Metrics
		switch {
		case m.ReadRecords <= m0.ReadRecords || m.ReadBytes <= m0.ReadBytes:
			return false, fmt.Errorf("records in %d -> %d, bytes in %d -> %d", m0.ReadRecords, m.ReadRecords, m0.ReadBytes, m.ReadBytes)
		case m.ReadRecordsPerSecond <= 0:
			return false, fmt.Errorf("records in per second %v", m.ReadRecordsPerSecond)
		case m.CurrentInputWatermark == nil || m0.CurrentInputWatermark != nil && *m.CurrentInputWatermark <= *m0.CurrentInputWatermark:
			return false, fmt.Errorf("watermark %v -> %v", m0.CurrentInputWatermark, m.CurrentInputWatermark)
		case m.StateSize <= 0:
			return false, fmt.Errorf("state size %d", m.StateSize)
		}
		return true, nil
	})
	src, err := c.Vertex(ctx, jobID, source)
	if err != nil {
		t.Fatal(err)
	}
	m := src.Subtasks[0].Metrics
	if m.WriteRecords <= 0 || m.WriteRecordsPerSecond <= 0 || m.WriteBytes <= 0 || src.Subtasks[0].Status != "RUNNING" {
		t.Errorf("source subtask %+v: want records and bytes out", src.Subtasks[0])
	}
	if m.PendingRecords == nil || len(m.SplitLag) != 2 || *m.PendingRecords <= 0 {
		t.Errorf("source split lag %v (pending %v): want two splits with records left", m.SplitLag, m.PendingRecords)
	}
	if _, err := c.Vertex(ctx, jobID, "no-such-vertex"); !api.IsStatus(err, http.StatusNotFound) {
		t.Errorf("unknown vertex: %v, want 404", err)
	}

	// The answers decode into the public types without a field left over.
	for path, into := range map[string]any{
		"/jobs/" + jobID + "/vertices/" + source:                   &api.VertexDetails{},
		"/jobs/" + jobID + "/vertices/" + source + "/backpressure": &api.VertexBackPressure{},
	} {
		raw, err := c.Raw(ctx, http.MethodGet, path, nil)
		if err != nil {
			t.Fatal(err)
		}
		strict(t, path, raw, into)
	}

	// /metrics exports the subtasks' metrics, tagged by vertex and subtask.
	testkit.WaitFor(t, "/metrics to export the task metrics", func() (bool, error) {
		raw, err := c.Raw(context.Background(), http.MethodGet, "/metrics", nil)
		if err != nil && !strings.Contains(err.Error(), "not the expected JSON") {
			return false, err
		}
		text := string(raw)
		for _, want := range []string{
			`tide_jobmanager_job_task_backPressuredTimeMsPerSecond{`,
			`tide_jobmanager_job_task_numRecordsOutPerSecond{`,
			`tide_jobmanager_job_task_busyTimeMsPerSecond{`,
			`vertex="` + source + `"`, `subtask_index="0"`,
		} {
			if !strings.Contains(text, want) {
				return false, fmt.Errorf("/metrics lacks %s", want)
			}
		}
		return true, nil
	})
}
