package core

import (
	"cmp"
	"slices"
	"time"

	"github.com/tidestream/tide/core/allocator"
	"github.com/tidestream/tide/core/keygroups"
)

// WarmupKind says why a TaskManager keeps a copy of a key-group range it does not run.
type WarmupKind string

const (
	// WarmupPlanned: a planned move (scale-up, evacuation, `tide rescale`) gives the range
	// to this TaskManager at the switch; the copy is KIP-441's warm-up (learner) replica.
	WarmupPlanned WarmupKind = "WARMUP"
	// WarmupStandby: num.standby.replicas keeps the copy for a TaskManager loss.
	WarmupStandby WarmupKind = "STANDBY"
)

// WarmupTask is one key-group range of a vertex that a TaskManager copies from the
// checkpoint storage into its local state, and keeps current with every newer completed
// checkpoint, while the job runs elsewhere.
type WarmupTask struct {
	Vertex         VertexID
	Subtask        int // the subtask that owns (or will own) the range
	MaxParallelism int
	KeyGroups      keygroups.Range
	TaskManager    TaskManagerID
}

// WarmUp asks the TaskManagers of its tasks to copy their ranges as of Checkpoint (the
// newest completed one). The same Round is sent again with every newer checkpoint: the
// copies follow it. A TaskManager reports each applied checkpoint with WarmupReported.
type WarmUp struct {
	Round      int
	Kind       WarmupKind
	Checkpoint CheckpointID
	Tasks      []WarmupTask
}

// StopWarmup ends a round: its TaskManagers stop following checkpoints for it. Copies
// already made stay in their local state, where a restore finds them.
type StopWarmup struct {
	Round  int
	Reason string
}

// WarmupReported: a TaskManager holds a copy of a round's range as of Checkpoint (Bytes
// fetched so far for it), or could not make it (Error; the round goes on without it).
type WarmupReported struct {
	Round       int
	TaskManager TaskManagerID
	Vertex      VertexID
	KeyGroups   keygroups.Range
	Checkpoint  CheckpointID
	Bytes       int64
	Error       string
}

func (WarmUp) isEffect()        {}
func (StopWarmup) isEffect()    {}
func (WarmupReported) isEvent() {}

// warmupEnabled: planned moves warm up first (state.warmup.timeout > 0 and
// max.warmup.replicas > 0), which needs a completed checkpoint to copy from.
func (s *Scheduler) warmupEnabled() bool {
	return s.opts.WarmupTimeout > 0 && s.opts.MaxWarmupReplicas > 0 && s.latestCheckpoint > 0
}

// warmCopy is one task of a round and how far its copy got.
type warmCopy struct {
	task    WarmupTask
	applied CheckpointID
	bytes   int64
	failed  string
	moved   int // key groups of the range its TaskManager did not hold
	// caughtUp: the copy held the newest completed checkpoint once (or failed); from then
	// on it only follows, and no longer counts against max.warmup.replicas
	caughtUp bool
}

// ready: the copy holds the newest completed checkpoint (within one checkpoint of
// current: the switch replays from that checkpoint), or it failed and is given up.
func (c *warmCopy) ready(latest CheckpointID) bool { return c.failed != "" || c.applied >= latest }

// warmupRound is a planned move waiting for its warm-ups. At most max.warmup.replicas
// copies catch up at a time; the other moving ranges queue, and each report that a copy
// caught up (or failed) starts the next ones: KIP-441's probing rebalances, in tide's
// terms, without a switch per probe (a switch stops the whole job, so there is one, when
// every copy is caught up or at state.warmup.timeout; ranges still queued then move
// without a warm-up).
type warmupRound struct {
	id       int
	start    time.Time
	target   allocator.Parallelism
	trigger  RescaleTrigger
	cause    string
	copies   []warmCopy      // started
	queued   []warmCopy      // waiting for a started copy to catch up
	planned  []WarmupTask    // every moving range, started or queued, in plan order
	evacuate []TaskManagerID // evacuation: released (or, kept, restarted away from) at the switch
}

func (r *warmupRound) tasks() []WarmupTask {
	out := make([]WarmupTask, len(r.copies))
	for i, c := range r.copies {
		out[i] = c.task
	}
	return out
}

func (r *warmupRound) allReady(latest CheckpointID) bool {
	if len(r.queued) > 0 {
		return false
	}
	for i := range r.copies {
		if !r.copies[i].ready(latest) {
			return false
		}
	}
	return true
}

// summary is what the rescale history keeps of a round.
func (r *warmupRound) summary(now time.Time, latest CheckpointID) WarmupSummary {
	w := WarmupSummary{Duration: now.Sub(r.start), Planned: len(r.copies), Skipped: len(r.queued)}
	for _, c := range r.copies {
		w.Bytes += c.bytes
		switch {
		case c.failed != "":
			w.Failed++
		case c.applied >= latest:
			w.Ready++
		}
	}
	return w
}

// predictPlan plans the job as the switch will: on the free slots plus the slots the
// running attempt holds, except those on blocked nodes and on TaskManagers in skip (they
// go at the switch). The running attempt's placement is the plan's previous placement, as
// it is once the attempt is released.
func (s *Scheduler) predictPlan(skip map[TaskManagerID]bool) (allocator.Plan, bool) {
	free := map[string][]int{}
	for _, tm := range s.pool.FreeSlots(nil) {
		free[tm.ID] = append(free[tm.ID], tm.Free...)
	}
	var prev map[string][]string
	if d := s.dep; d != nil {
		prev = d.placement
		for k, a := range d.slots {
			tm := a.Slot.TaskManager
			if d.slotLive[k] < 0 || skip[tm] || !s.pool.Has(string(tm)) {
				continue
			}
			if node, ok := s.pool.Node(string(tm)); !ok || s.blocked.IsBlocked(node) {
				continue
			}
			free[string(tm)] = append(free[string(tm)], a.Slot.Index)
		}
	}
	tms := make([]allocator.TaskManager, 0, len(free))
	for id, slots := range free {
		slices.Sort(slots)
		tms = append(tms, allocator.TaskManager{ID: id, Free: slices.Compact(slots)})
	}
	slices.SortFunc(tms, func(a, b allocator.TaskManager) int { return cmp.Compare(a.ID, b.ID) })
	return allocator.Decide(s.requirements(), tms, allocator.Options{
		PreferMinimalTaskManagers: s.opts.PreferMinimalTaskManagers,
		Previous:                  prev,
	})
}

// planTaskManagers returns, per vertex, the TaskManager of every subtask of a plan.
func (s *Scheduler) planTaskManagers(plan allocator.Plan) map[VertexID][]string {
	out := make(map[VertexID][]string, len(s.vertices))
	for _, v := range s.vertices {
		out[v.id] = make([]string, plan.Parallelism[string(v.id)])
	}
	for _, a := range plan.Assignments {
		for _, v := range s.vertices {
			if v.group == a.Group && a.Index < len(out[v.id]) {
				out[v.id][a.Index] = a.Slot.TaskManager
			}
		}
	}
	return out
}

// planWarmups lists the ranges of plan that land on a TaskManager which does not hold
// all of them now, most moved key groups first (ties in vertex and subtask order).
func (s *Scheduler) planWarmups(plan allocator.Plan) []warmCopy {
	perVertex := s.planTaskManagers(plan)
	var out []warmCopy
	for _, v := range s.vertices {
		tms := perVertex[v.id]
		if len(tms) == 0 {
			continue
		}
		prev := s.lastKeyGroups[v.id]
		if len(prev.Ranges) == 0 {
			continue
		}
		ranges, err := keygroups.Assign(v.maxP, tms, prev, s.balanceFactor())
		if err != nil {
			continue
		}
		owner := prev.Holders(v.maxP)
		for i, r := range ranges {
			moved := 0
			for kg := r.Start; kg <= r.End; kg++ {
				if owner[kg] != tms[i] {
					moved++
				}
			}
			if moved == 0 {
				continue
			}
			out = append(out, warmCopy{moved: moved, task: WarmupTask{Vertex: v.id, Subtask: i, MaxParallelism: v.maxP,
				KeyGroups: r, TaskManager: TaskManagerID(tms[i])}})
		}
	}
	slices.SortStableFunc(out, func(a, b warmCopy) int { return cmp.Compare(b.moved, a.moved) })
	return out
}

func (s *Scheduler) balanceFactor() float64 {
	if f := s.opts.KeyGroupBalanceFactor; f != 0 {
		return f
	}
	return keygroups.DefaultBalanceFactor
}

// newWarmupRound plans a round towards target; ok is false when the plan does not give
// target or nothing moves (the switch then happens at once).
func (s *Scheduler) newWarmupRound(now time.Time, target allocator.Parallelism, skip map[TaskManagerID]bool) (*warmupRound, bool) {
	plan, ok := s.predictPlan(skip)
	if !ok || (target != nil && !plan.Parallelism.Equal(target)) {
		return nil, false
	}
	copies := s.planWarmups(plan)
	if len(copies) == 0 {
		return nil, false
	}
	r := &warmupRound{start: now, target: plan.Parallelism}
	for _, c := range copies {
		r.planned = append(r.planned, c.task)
	}
	n := min(s.opts.MaxWarmupReplicas, len(copies))
	r.copies, r.queued = copies[:n:n], copies[n:]
	return r, true
}

// probe starts queued copies while fewer than max.warmup.replicas started ones are still
// catching up, and reports whether it started any.
func (r *warmupRound) probe(max int) bool {
	active := 0
	for _, c := range r.copies {
		if !c.caughtUp {
			active++
		}
	}
	started := false
	for active < max && len(r.queued) > 0 {
		r.copies = append(r.copies, r.queued[0])
		r.queued = r.queued[1:]
		active++
		started = true
	}
	return started
}

// sameTasks reports whether two rounds move the same ranges to the same TaskManagers.
func sameTasks(a, b *warmupRound) bool {
	return slices.Equal(a.planned, b.planned) && a.target.Equal(b.target)
}

// onWarmupReported records a TaskManager's progress on a copy.
func (s *Scheduler) onWarmupReported(now time.Time, ev WarmupReported) {
	if s.standby != nil && s.standby.id == ev.Round {
		s.standby.report(ev)
		return
	}
	e, ok := s.state.(*executing)
	if !ok || e.warm == nil || e.warm.id != ev.Round {
		s.stale("warm-up report", "round", ev.Round, "task_manager", ev.TaskManager)
		return
	}
	for i := range e.warm.copies {
		c := &e.warm.copies[i]
		if c.task.TaskManager != ev.TaskManager || c.task.Vertex != ev.Vertex || c.task.KeyGroups != ev.KeyGroups {
			continue
		}
		c.bytes = max(c.bytes, ev.Bytes)
		if ev.Error != "" {
			if c.failed == "" {
				s.log.Warn("warm-up failed; the move goes on without it", "round", ev.Round, "task_manager", ev.TaskManager,
					"vertex", ev.Vertex, "key_groups", ev.KeyGroups, "err", ev.Error)
			}
			c.failed = ev.Error
		} else {
			c.applied = max(c.applied, ev.Checkpoint)
		}
		c.caughtUp = c.caughtUp || c.failed != "" || c.applied >= s.latestCheckpoint
	}
	if e.warm.probe(s.opts.MaxWarmupReplicas) {
		r := e.warm
		s.log.Info("warm-up probe: starting queued copies", "round", r.id, "started", len(r.copies), "queued", len(r.queued))
		s.emit(WarmUp{Round: r.id, Kind: WarmupPlanned, Checkpoint: s.latestCheckpoint, Tasks: r.tasks()})
	}
	e.maybeSwitch(now)
}

// nextWarmupRound numbers rounds (planned and standby share the sequence).
func (s *Scheduler) nextWarmupRound() int {
	s.warmupRounds++
	return s.warmupRounds
}
