package core

import (
	"maps"
	"slices"
	"time"

	"github.com/tidestream/tide/core/blocklist"
	"github.com/tidestream/tide/core/keygroups"
)

// Read-only views for the AM and the REST API. They return copies.

// Status is the job status Flink's clients see.
func (s *Scheduler) Status() JobStatus { return s.state.status() }

// StateName is the scheduler state.
func (s *Scheduler) StateName() StateName { return s.state.name() }

// Version is the state version; it grows on every transition.
func (s *Scheduler) Version() uint64 { return s.version }

// Attempt is the latest deployment attempt (0: never deployed).
func (s *Scheduler) Attempt() AttemptID { return s.attempt }

// LatestCheckpoint is the newest completed checkpoint known (the next restore point).
func (s *Scheduler) LatestCheckpoint() CheckpointID { return s.latestCheckpoint }

// Options are the options in force.
func (s *Scheduler) Options() Options { return s.opts }

// Parallelism is the running attempt's parallelism per vertex (empty when none runs).
func (s *Scheduler) Parallelism() map[VertexID]int {
	if p := s.parallelism(); p != nil {
		return p
	}
	return map[VertexID]int{}
}

// Requirements are the current per-vertex bounds (GET /jobs/:id/resource-requirements).
func (s *Scheduler) Requirements() map[VertexID]Bounds {
	out := make(map[VertexID]Bounds, len(s.vertices))
	for _, v := range s.vertices {
		out[v.id] = Bounds{Lower: v.lower, Upper: v.upper}
	}
	return out
}

// MaxParallelism is each vertex's maxParallelism (fixed for the job's life).
func (s *Scheduler) MaxParallelism() map[VertexID]int {
	out := make(map[VertexID]int, len(s.vertices))
	for _, v := range s.vertices {
		out[v.id] = v.maxP
	}
	return out
}

// TaskManagerInfo describes one registered TaskManager (GET /taskmanagers).
type TaskManagerInfo struct {
	ID            TaskManagerID
	Node          NodeID
	Slots         int
	Free          int
	Registered    time.Time
	LastHeartbeat time.Time
	Blocked       bool
}

// TaskManagers lists the registered TaskManagers, sorted by id.
func (s *Scheduler) TaskManagers() []TaskManagerInfo {
	infos := s.pool.Infos()
	out := make([]TaskManagerInfo, len(infos))
	for i, in := range infos {
		out[i] = TaskManagerInfo{ID: TaskManagerID(in.ID), Node: NodeID(in.Node), Slots: in.Slots, Free: in.Free,
			Registered: in.Registered, LastHeartbeat: in.LastHeartbeat, Blocked: in.Blocked}
	}
	return out
}

// Blocklist is every blocked node, sorted by id.
func (s *Scheduler) Blocklist() []blocklist.BlockedNode { return s.blocked.All() }

// RescaleHistory lists the finished rescales, oldest first.
func (s *Scheduler) RescaleHistory() []Rescale { return slices.Clone(s.history.done) }

// CurrentRescale is the rescale under way, if any.
func (s *Scheduler) CurrentRescale() (Rescale, bool) {
	if s.history.current == nil {
		return Rescale{}, false
	}
	r := *s.history.current
	r.States = slices.Clone(r.States)
	r.Vertices = slices.Clone(r.Vertices)
	return r, true
}

// Exceptions is the bounded exception history, oldest first.
func (s *Scheduler) Exceptions() []ExceptionEntry { return slices.Clone(s.exceptions) }

// Metrics returns the counters and current gauges.
func (s *Scheduler) Metrics() Metrics {
	m := s.metrics
	m.NumBlockedNodes = s.blocked.Len()
	m.RegisteredTaskManagers = s.pool.Len()
	m.TotalSlots, m.FreeSlots = s.pool.Counts()
	m.PendingWorkers = s.pendingWorkers
	return m
}

// WarmupGauges are the warm-up and standby gauges: WarmupCopies are the copies of the
// planned move in progress (0: none) and WarmupLag how many checkpoint ids the
// furthest-behind of them lags the newest completed checkpoint; StandbyCopies and
// StandbyLag are the same for the standby copies (num.standby.replicas).
type WarmupGauges struct {
	WarmupCopies  int
	WarmupLag     int
	StandbyCopies int
	StandbyLag    int
}

// WarmupGauges returns the current warm-up and standby gauges.
func (s *Scheduler) WarmupGauges() WarmupGauges {
	var m WarmupGauges
	if e, ok := s.state.(*executing); ok && e.warm != nil {
		m.WarmupCopies = len(e.warm.copies)
		for _, c := range e.warm.copies {
			if c.failed == "" {
				m.WarmupLag = max(m.WarmupLag, int(s.latestCheckpoint-c.applied))
			}
		}
	}
	if s.standby != nil {
		m.StandbyCopies = len(s.standby.copies)
		m.StandbyLag = s.standbyLag()
	}
	return m
}

// KeyGroupPlacement returns the last deployed key-group placement by vertex.
func (s *Scheduler) KeyGroupPlacement() map[VertexID]keygroups.Placed {
	return maps.Clone(s.lastKeyGroups)
}

// Order returns the vertices in job-graph order.
func (s *Scheduler) Order() []VertexID { return slices.Clone(s.order) }
