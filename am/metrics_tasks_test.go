package am

import (
	"testing"
	"time"

	"github.com/uber-go/tally/v4"

	"github.com/tidestream/tide/core"
	"github.com/tidestream/tide/rpc"
)

func sampleMsg(attempt int64, vertex string, index int32, elapsed, idle, bp time.Duration, in, out int64) *rpc.TaskMetrics {
	return &rpc.TaskMetrics{Subtasks: []*rpc.SubtaskMetrics{{Attempt: attempt, Vertex: vertex, Index: index,
		ElapsedNanos: int64(elapsed), IdleNanos: int64(idle), BackPressuredNanos: int64(bp),
		RecordsIn: in, RecordsOut: out, BytesIn: in * 10, BytesOut: out * 10,
		SplitLag: []*rpc.SplitLag{{Split: "p-0", Records: 5}, {Split: "p-1", Records: 7}}}}}
}

// TestTaskMetricsRates: rates come from the last two samples of a subtask (from its whole
// run after the first), times per second are shares of the interval, a newer attempt
// replaces the older one's subtasks, and a sample of an older attempt is dropped.
func TestTaskMetricsRates(t *testing.T) {
	scope := tally.NewTestScope("", nil)
	tm := newTaskMetrics(scope)
	now := time.Unix(1000, 0)
	v := core.VertexID("src")
	tm.record("tm-1", "n-1", sampleMsg(1, "src", 0, 2*time.Second, 500*time.Millisecond, 500*time.Millisecond, 1000, 900), now)
	tests := []struct {
		name                     string
		msg                      *rpc.TaskMetrics
		wantIn, wantBusy, wantBP float64
		wantAttempt              core.AttemptID
	}{
		{"first sample: over the whole run", nil, 500, 500, 250, 1},
		// one more second: 3000 records more, 100 ms idle, 600 ms back-pressured
		{"second sample: over the interval", sampleMsg(1, "src", 0, 3*time.Second, 600*time.Millisecond, 1100*time.Millisecond, 4000, 3900), 3000, 300, 600, 1},
		{"an older attempt is dropped", sampleMsg(0, "src", 0, 10*time.Second, 0, 0, 1, 1), 3000, 300, 600, 1},
		{"a newer attempt starts over", sampleMsg(2, "src", 0, time.Second, 0, 900*time.Millisecond, 50, 50), 50, 100, 900, 2},
	}
	for _, tt := range tests {
		if tt.msg != nil {
			now = now.Add(time.Second)
			tm.record("tm-1", "n-1", tt.msg, now)
		}
		got := tm.vertex(v)
		if len(got) != 1 {
			t.Fatalf("%s: %d subtasks", tt.name, len(got))
		}
		m := got[0]
		if m.RecordsInPerSecond != tt.wantIn || m.BusyMsPerSecond != tt.wantBusy || m.BackPressuredMsPerSecond != tt.wantBP || m.Attempt != tt.wantAttempt {
			t.Errorf("%s: in %v/s busy %v ms/s back-pressured %v ms/s attempt %d; want %v, %v, %v, %d", tt.name,
				m.RecordsInPerSecond, m.BusyMsPerSecond, m.BackPressuredMsPerSecond, m.Attempt, tt.wantIn, tt.wantBusy, tt.wantBP, tt.wantAttempt)
		}
		if m.PendingRecords != 12 || m.SplitLag["p-1"] != 7 || m.TaskManager != "tm-1" || m.Node != "n-1" {
			t.Errorf("%s: lag %v (pending %d), on %s/%s", tt.name, m.SplitLag, m.PendingRecords, m.TaskManager, m.Node)
		}
	}
	// The gauges carry the last values, tagged by vertex and subtask.
	g, ok := scope.Snapshot().Gauges()["task.backPressuredTimeMsPerSecond+subtask_index=0,vertex=src"]
	if !ok || g.Value() != 900 {
		t.Errorf("gauge backPressuredTimeMsPerSecond: %v %v; gauges %v", ok, g, scope.Snapshot().Gauges())
	}
}
