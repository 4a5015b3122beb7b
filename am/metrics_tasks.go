package am

import (
	"sort"
	"strconv"
	"sync"
	"time"

	"github.com/uber-go/tally/v4"

	"github.com/tidestream/tide/core"
	"github.com/tidestream/tide/rpc"
)

// taskSample is one sample of a subtask's metrics as its TaskManager sent it.
type taskSample struct {
	elapsed               time.Duration
	recordsIn, recordsOut int64
	bytesIn, bytesOut     int64
	idle, backPressured   time.Duration
	watermark             int64
	hasWatermark          bool
	alignment             time.Duration
	stateSize             int64
	splitLag              []*rpc.SplitLag
}

func sampleOf(m *rpc.SubtaskMetrics) taskSample {
	return taskSample{
		elapsed: time.Duration(m.GetElapsedNanos()), recordsIn: m.GetRecordsIn(), recordsOut: m.GetRecordsOut(),
		bytesIn: m.GetBytesIn(), bytesOut: m.GetBytesOut(), idle: time.Duration(m.GetIdleNanos()),
		backPressured: time.Duration(m.GetBackPressuredNanos()), watermark: m.GetInputWatermark(),
		hasWatermark: m.GetHasWatermark(), alignment: time.Duration(m.GetLastAlignmentNanos()),
		stateSize: m.GetStateSize(), splitLag: m.GetSplitLag(),
	}
}

// SubtaskMetrics is what the AM knows of one subtask's metrics: the latest totals and the
// rates between the latest two samples (over the subtask's whole run after the first).
type SubtaskMetrics struct {
	Vertex      core.VertexID
	Index       int
	Attempt     core.AttemptID
	TaskManager core.TaskManagerID
	Node        core.NodeID
	Received    time.Time
	Elapsed     time.Duration

	RecordsIn, RecordsOut, BytesIn, BytesOut int64
	Idle, BackPressured, Busy                time.Duration

	RecordsInPerSecond, RecordsOutPerSecond   float64
	BytesInPerSecond, BytesOutPerSecond       float64
	BusyMsPerSecond, BackPressuredMsPerSecond float64
	IdleMsPerSecond                           float64
	InputWatermark                            int64
	HasWatermark                              bool
	LastAlignment                             time.Duration
	StateSize                                 int64
	SplitLag                                  map[string]int64
	PendingRecords                            int64 // the sum of SplitLag
}

// subtaskSeries is the last two samples of one subtask.
type subtaskSeries struct {
	attempt    core.AttemptID
	tm         core.TaskManagerID
	node       core.NodeID
	received   time.Time
	prev, last taskSample
	hasPrev    bool
}

// taskMetrics keeps the metrics of the newest attempt's subtasks and exports them through
// tally. The loop goroutine records; REST handlers read; both under mu.
type taskMetrics struct {
	scope tally.Scope

	mu       sync.Mutex
	attempt  core.AttemptID
	subtasks map[core.SubtaskID]*subtaskSeries
	gauges   map[core.SubtaskID]map[string]tally.Gauge
}

func newTaskMetrics(job tally.Scope) *taskMetrics {
	return &taskMetrics{scope: job.SubScope("task"), subtasks: map[core.SubtaskID]*subtaskSeries{},
		gauges: map[core.SubtaskID]map[string]tally.Gauge{}}
}

// record takes one TaskMetrics message of TaskManager tm on node (loop goroutine).
func (t *taskMetrics) record(tm core.TaskManagerID, node core.NodeID, msg *rpc.TaskMetrics, now time.Time) {
	t.mu.Lock()
	defer t.mu.Unlock()
	for _, m := range msg.GetSubtasks() {
		attempt := core.AttemptID(m.GetAttempt())
		if attempt < t.attempt {
			continue // a sample of a cancelled attempt, sent before the cancel arrived
		}
		if attempt > t.attempt {
			t.attempt = attempt
			for id, s := range t.subtasks {
				if s.attempt < attempt {
					delete(t.subtasks, id)
				}
			}
		}
		id := core.SubtaskID{Vertex: core.VertexID(m.GetVertex()), Index: int(m.GetIndex())}
		s, ok := t.subtasks[id]
		if !ok || s.attempt != attempt {
			s = &subtaskSeries{attempt: attempt}
			t.subtasks[id] = s
		} else {
			s.prev, s.hasPrev = s.last, true
		}
		s.tm, s.node, s.received, s.last = tm, node, now, sampleOf(m)
	}
	t.exportLocked()
}

// view derives the metrics of one subtask (mu held).
func (s *subtaskSeries) view(id core.SubtaskID) SubtaskMetrics {
	l := s.last
	busy := max(0, l.elapsed-l.idle-l.backPressured)
	v := SubtaskMetrics{
		Vertex: id.Vertex, Index: id.Index, Attempt: s.attempt, TaskManager: s.tm, Node: s.node, Received: s.received,
		Elapsed: l.elapsed, RecordsIn: l.recordsIn, RecordsOut: l.recordsOut, BytesIn: l.bytesIn, BytesOut: l.bytesOut,
		Idle: l.idle, BackPressured: l.backPressured, Busy: busy, InputWatermark: l.watermark,
		HasWatermark: l.hasWatermark, LastAlignment: l.alignment, StateSize: l.stateSize,
		SplitLag: map[string]int64{},
	}
	for _, sl := range l.splitLag {
		v.SplitLag[sl.GetSplit()] = sl.GetRecords()
		v.PendingRecords += sl.GetRecords()
	}
	// Rates over the last interval; over the whole run until there are two samples.
	p := taskSample{}
	if s.hasPrev {
		p = s.prev
	}
	dt := (l.elapsed - p.elapsed).Seconds()
	if dt <= 0 {
		return v
	}
	pBusy := max(0, p.elapsed-p.idle-p.backPressured)
	perSecond := func(now, before int64) float64 { return max(0, float64(now-before)/dt) }
	msPerSecond := func(now, before time.Duration) float64 {
		return min(1000, max(0, float64((now-before).Milliseconds())/dt))
	}
	v.RecordsInPerSecond = perSecond(l.recordsIn, p.recordsIn)
	v.RecordsOutPerSecond = perSecond(l.recordsOut, p.recordsOut)
	v.BytesInPerSecond = perSecond(l.bytesIn, p.bytesIn)
	v.BytesOutPerSecond = perSecond(l.bytesOut, p.bytesOut)
	v.BusyMsPerSecond = msPerSecond(busy, pBusy)
	v.BackPressuredMsPerSecond = msPerSecond(l.backPressured, p.backPressured)
	v.IdleMsPerSecond = msPerSecond(l.idle, p.idle)
	return v
}

// vertex returns the metrics of every subtask of vertex v, by index.
func (t *taskMetrics) vertex(v core.VertexID) []SubtaskMetrics {
	t.mu.Lock()
	defer t.mu.Unlock()
	var out []SubtaskMetrics
	for id, s := range t.subtasks {
		if id.Vertex == v {
			out = append(out, s.view(id))
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Index < out[j].Index })
	return out
}

// exportLocked updates the tally gauges of every subtask and zeroes those of subtasks
// that no longer run (mu held).
func (t *taskMetrics) exportLocked() {
	for id, gs := range t.gauges {
		if _, ok := t.subtasks[id]; !ok {
			for _, g := range gs {
				g.Update(0)
			}
		}
	}
	for id, s := range t.subtasks {
		gs, ok := t.gauges[id]
		if !ok {
			gs = map[string]tally.Gauge{}
			sc := t.scope.Tagged(map[string]string{"vertex": string(id.Vertex), "subtask_index": strconv.Itoa(id.Index)})
			for _, d := range taskMetricDefs {
				gs[d.Name] = sc.Gauge(d.Name)
			}
			t.gauges[id] = gs
		}
		v := s.view(id)
		for _, d := range taskMetricDefs {
			gs[d.Name].Update(d.value(v))
		}
	}
}
