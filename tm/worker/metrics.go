package worker

import (
	"time"

	"github.com/tidestream/tide/rpc"
	"github.com/tidestream/tide/tm/exec"
)

// taskMetricsInterval is how often a TaskManager sends its subtasks' metrics to the AM.
const taskMetricsInterval = time.Second

// reportMetrics sends a sample of every running subtask's metrics every interval until
// done is closed or the session ends.
func reportMetrics(sess *amSession, ex *exec.Executor, space attemptSpace, every time.Duration, done <-chan struct{}) {
	t := time.NewTicker(every)
	defer t.Stop()
	for {
		select {
		case <-t.C:
			samples := ex.Metrics()
			if len(samples) == 0 {
				continue
			}
			msg := &rpc.TaskMetrics{Subtasks: make([]*rpc.SubtaskMetrics, 0, len(samples))}
			for _, s := range samples {
				msg.Subtasks = append(msg.Subtasks, subtaskMetricsProto(space.am(s.Attempt), s))
			}
			if err := sess.send(&rpc.TaskManagerMessage{Kind: &rpc.TaskManagerMessage_TaskMetrics{TaskMetrics: msg}}); err != nil {
				return
			}
		case <-done:
			return
		}
	}
}

func subtaskMetricsProto(attempt int64, s exec.SubtaskMetrics) *rpc.SubtaskMetrics {
	m := &rpc.SubtaskMetrics{
		Attempt: attempt, Vertex: s.Vertex, Index: int32(s.Index), ElapsedNanos: int64(s.Elapsed),
		RecordsIn: s.RecordsIn, RecordsOut: s.RecordsOut, BytesIn: s.BytesIn, BytesOut: s.BytesOut,
		IdleNanos: int64(s.Idle), BackPressuredNanos: int64(s.BackPressured),
		InputWatermark: s.InputWatermark, HasWatermark: s.HasWatermark,
		LastAlignmentNanos: int64(s.LastAlignment), StateSize: s.StateSize,
		RestoreLocalBytes: s.RestoreLocalBytes, RestoreDownloadedBytes: s.RestoreDownloadedBytes,
	}
	for _, l := range s.SplitLag {
		m.SplitLag = append(m.SplitLag, &rpc.SplitLag{Split: l.Split, Records: l.Records})
	}
	return m
}
