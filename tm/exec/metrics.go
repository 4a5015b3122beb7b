package exec

import (
	"sync"
	"sync/atomic"
	"time"

	"github.com/tidestream/tide/stream"
	"github.com/tidestream/tide/tm/netplane"
)

// splitLagEvery is how often a source subtask samples its reader's split lag.
const splitLagEvery = 500 * time.Millisecond

// SubtaskMetrics is one sample of a running subtask's metrics. Counts and times are
// cumulative since the subtask started; rates come from two samples.
type SubtaskMetrics struct {
	Attempt               int64
	Vertex                string
	Index                 int
	Elapsed               time.Duration
	RecordsIn, RecordsOut int64
	BytesIn, BytesOut     int64
	Idle, BackPressured   time.Duration
	InputWatermark        int64
	HasWatermark          bool
	LastAlignment         time.Duration
	StateSize             int64
	SplitLag              []stream.SplitLag
	// UploadedBytes is what the last checkpoint uploaded (with incremental checkpoints
	// only the new tables); AsyncDuration its background part; UploadWaits counts
	// barriers that waited for the previous upload.
	UploadedBytes int64
	// SyncDuration is the last checkpoint's synchronous part: from the aligned barrier
	// until the subtask went on processing.
	SyncDuration  time.Duration
	AsyncDuration time.Duration
	UploadWaits   int64
	// RestoreLocalBytes and RestoreDownloadedBytes split what the subtask's restore read
	// from the local state store and from checkpoint storage.
	RestoreLocalBytes, RestoreDownloadedBytes int64
}

// taskMetrics are the counters of one subtask. The subtask's goroutines update them; the
// TaskManager's reporter reads them at any time. Off (Config.DisableTaskMetrics), the
// per-record counters are not touched, which is what the benchmark compares against.
type taskMetrics struct {
	on    bool
	start time.Time

	recordsIn, recordsOut atomic.Int64
	bytesIn, bytesOut     atomic.Int64
	idle                  atomic.Int64 // nanoseconds
	watermark             atomic.Int64
	hasWatermark          atomic.Bool
	alignment             atomic.Int64 // nanoseconds
	stateSize             atomic.Int64
	syncDuration          atomic.Int64 // last checkpoint's synchronous part, nanoseconds
	asyncDuration         atomic.Int64 // last checkpoint's background part, nanoseconds
	uploadWaits           atomic.Int64 // barriers that waited for the previous upload
	uploadedBytes         atomic.Int64 // bytes the last checkpoint uploaded (new tables only, when incremental)
	restoreLocal          atomic.Int64
	restoreDownloaded     atomic.Int64

	mu       sync.Mutex
	outputs  []*netplane.Output
	splitLag []stream.SplitLag

	// owned by the subtask's goroutine
	alignID    int64
	alignStart time.Time
	lastLag    time.Time
	// Records and bytes counted but not yet added to the atomics above: the per-record
	// paths add plain numbers and publish them every metricsBatch records and whenever the
	// subtask waits or sends a control message, so a record costs no atomic operation.
	pendIn, pendOut, pendOutBytes int64
}

func newTaskMetrics(on bool) *taskMetrics {
	return &taskMetrics{on: on, start: time.Now()}
}

// idleSince adds the time since start to the idle time (start from idleStart).
func (m *taskMetrics) idleSince(start time.Time) {
	if m.on {
		m.idle.Add(int64(time.Since(start)))
	}
}

// idleStart is when a wait for input begins (zero when metrics are off). What the
// subtask counted is published first: a waiting subtask's numbers are current.
func (m *taskMetrics) idleStart() time.Time {
	if !m.on {
		return time.Time{}
	}
	m.publish()
	return time.Now()
}

// metricsBatch is how many records the subtask's goroutine counts before it publishes
// them (at most this many are missing from a sample taken while it is busy).
const metricsBatch = 256

// recordIn counts one record read by a source (subtask's goroutine only).
func (m *taskMetrics) recordIn() {
	if m.pendIn++; m.pendIn >= metricsBatch {
		m.publish()
	}
}

// countOut counts n records of bytes in all sent on (subtask's goroutine only).
func (m *taskMetrics) countOut(n, bytes int) {
	m.pendOutBytes += int64(bytes)
	if m.pendOut += int64(n); m.pendOut >= metricsBatch {
		m.publish()
	}
}

// publish adds what the subtask's goroutine counted to the atomics samples read.
func (m *taskMetrics) publish() {
	if m.pendIn > 0 {
		m.recordsIn.Add(m.pendIn)
		m.pendIn = 0
	}
	if m.pendOut > 0 || m.pendOutBytes > 0 {
		m.recordsOut.Add(m.pendOut)
		m.bytesOut.Add(m.pendOutBytes)
		m.pendOut, m.pendOutBytes = 0, 0
	}
}

func (m *taskMetrics) setOutputs(outs []*netplane.Output) {
	m.mu.Lock()
	m.outputs = outs
	m.mu.Unlock()
}

func (m *taskMetrics) setWatermark(wm int64) {
	m.watermark.Store(wm)
	m.hasWatermark.Store(true)
}

// barrier notes that barrier id arrived (the first of its alignment starts the clock).
func (m *taskMetrics) barrier(id int64) {
	if id > m.alignID {
		m.alignID, m.alignStart = id, time.Now()
	}
}

// aligned notes that the barriers of id have all arrived.
func (m *taskMetrics) aligned(id int64) {
	if id == m.alignID && !m.alignStart.IsZero() {
		m.alignment.Store(int64(time.Since(m.alignStart)))
		m.alignStart = time.Time{}
	}
}

// sampleLag reads the reader's split lag at most every splitLagEvery.
func (m *taskMetrics) sampleLag(r stream.SourceReader, now time.Time) {
	lr, ok := r.(stream.SplitLagReporter)
	if !ok || !m.on || now.Sub(m.lastLag) < splitLagEvery {
		return
	}
	m.lastLag = now
	lag := lr.SplitLag()
	m.mu.Lock()
	m.splitLag = lag
	m.mu.Unlock()
}

// sample reads every metric of the subtask.
func (m *taskMetrics) sample(attempt int64, vertex string, index int) SubtaskMetrics {
	s := SubtaskMetrics{
		Attempt: attempt, Vertex: vertex, Index: index, Elapsed: time.Since(m.start),
		RecordsIn: m.recordsIn.Load(), RecordsOut: m.recordsOut.Load(),
		BytesIn: m.bytesIn.Load(), BytesOut: m.bytesOut.Load(),
		Idle: time.Duration(m.idle.Load()), InputWatermark: m.watermark.Load(), HasWatermark: m.hasWatermark.Load(),
		LastAlignment: time.Duration(m.alignment.Load()), StateSize: m.stateSize.Load(),
		UploadedBytes: m.uploadedBytes.Load(), SyncDuration: time.Duration(m.syncDuration.Load()), AsyncDuration: time.Duration(m.asyncDuration.Load()), UploadWaits: m.uploadWaits.Load(),
		RestoreLocalBytes: m.restoreLocal.Load(), RestoreDownloadedBytes: m.restoreDownloaded.Load(),
	}
	m.mu.Lock()
	outs := m.outputs
	s.SplitLag = append([]stream.SplitLag(nil), m.splitLag...)
	m.mu.Unlock()
	// A subtask writing to several consumers is back-pressured while any write waits; the
	// writes happen one at a time on its goroutine, so the waits add up.
	for _, o := range outs {
		s.BackPressured += o.BackPressuredTime()
	}
	return s
}

// Metrics samples every running subtask of this TaskManager.
func (e *Executor) Metrics() []SubtaskMetrics {
	e.mu.Lock()
	var tasks []*task
	for _, a := range e.attempts {
		tasks = append(tasks, a.tasks...)
	}
	e.mu.Unlock()
	out := make([]SubtaskMetrics, 0, len(tasks))
	for _, t := range tasks {
		if t.isFinished() {
			continue
		}
		out = append(out, t.metrics.sample(t.a.id, t.vertex.ID, t.index))
	}
	return out
}
