package core

import (
	"fmt"
	"maps"
	"time"

	"github.com/tidestream/tide/core/allocator"
)

// deployment is one attempt of the job: where every subtask runs and in what state. It
// uses dense slices (subtask → position, slot → position) so that a decision over tens of
// thousands of subtasks stays cheap.
type deployment struct {
	attempt      AttemptID
	parallelism  map[VertexID]int
	offset       map[VertexID]int // position of the vertex's subtask 0 in tasks
	tasks        []taskPhase
	taskSlot     []int32 // position in slots
	slots        []SlotAssignment
	slotLive     []int32                   // non-terminal subtasks per slot; -1: slot gone with its TaskManager
	tmSlots      map[TaskManagerID][]int32 // slot positions per TaskManager; nil until first needed
	live         int                       // non-terminal subtasks
	finished     int
	ending       bool                // being cancelled: slots are freed as their subtasks stop
	placement    map[string][]string // group → TaskManager per subtask index (locality)
	placementMem []string            // the one backing array of every placement slice
}

// taskPhase is all the scheduler keeps of a subtask's TaskState: whether it still runs
// (one byte per subtask, nothing for the garbage collector to scan).
type taskPhase uint8

const (
	taskLive    taskPhase = iota // deploying, initializing or running
	taskStopped                  // finished, canceled, failed or lost with its TaskManager
)

// IsTerminal reports whether the subtask has stopped.
func (p taskPhase) IsTerminal() bool { return p == taskStopped }

// task returns the position of a subtask, or false if it is not part of the attempt.
func (d *deployment) task(st SubtaskID) (int, bool) {
	off, ok := d.offset[st.Vertex]
	if !ok || st.Index < 0 || st.Index >= d.parallelism[st.Vertex] {
		return 0, false
	}
	return off + st.Index, true
}

// planDeployment decides a plan on the free slots; ok is false when they are insufficient.
// The plan's assignments are valid until the next planDeployment: deploy it right away.
func (s *Scheduler) planDeployment() (allocator.Plan, bool) {
	s.freeBuf = s.pool.FreeSlots(s.freeBuf)
	return allocator.Decide(s.requirements(), s.freeBuf, allocator.Options{
		PreferMinimalTaskManagers: s.opts.PreferMinimalTaskManagers,
		Previous:                  s.lastPlacement,
		Workspace:                 &s.decideMem,
	})
}

// deploy reserves the plan's slots and starts a new attempt. If a slot vanished since
// planning, every reservation is rolled back and an error is returned.
//
// Its cost is linear in the number of slots: slot-sharing groups are resolved once per run
// of equal group names in the plan, nothing is keyed by TaskManager (dropTaskManager
// builds that index when a TaskManager is first lost), and the bookkeeping memory of the
// last released attempt is reused.
func (s *Scheduler) deploy(plan allocator.Plan) error {
	if s.beforeReserve != nil {
		s.beforeReserve()
	}
	if n, err := s.pool.ReserveAssigned(plan.Assignments); err != nil {
		s.unreserve(plan.Assignments[:n])
		s.metrics.ReservationFailures++
		return fmt.Errorf("reserve %d planned slots: %w", len(plan.Assignments), err)
	}
	n := len(plan.Assignments)
	groups, placementMem := s.deployGroups(plan)
	d := &deployment{
		attempt:      s.attempt + 1,
		parallelism:  make(map[VertexID]int, len(s.vertices)),
		offset:       make(map[VertexID]int, len(s.vertices)),
		slots:        make([]SlotAssignment, n),
		slotLive:     sized(s.spare.slotLive, n),
		placement:    make(map[string][]string, len(groups)),
		placementMem: placementMem,
	}
	eff := Deploy{Attempt: d.attempt, RestoreFrom: s.latestCheckpoint, Slots: d.slots,
		Vertices: make([]VertexDeployment, 0, len(s.vertices)), Adopted: s.adoptionOpen()}
	total := 0
	for _, v := range s.vertices {
		p := plan.Parallelism[string(v.id)]
		d.parallelism[v.id] = p
		d.offset[v.id] = total
		if g := findGroup(groups, nil, v.group); g != nil {
			g.members = append(g.members, placedVertex{id: v.id, p: p, offset: total})
		}
		total += p
		eff.Vertices = append(eff.Vertices, VertexDeployment{Vertex: v.id, Parallelism: p, MaxParallelism: v.maxP})
	}
	d.tasks = sized(s.spare.tasks, total)
	d.taskSlot = sized(s.spare.taskSlot, total)
	for i := range groups {
		d.placement[groups[i].name] = groups[i].placement
	}
	all := make([]SubtaskID, 0, total) // one backing array for every slot's subtask list
	var g *deployGroup
	for k, a := range plan.Assignments {
		if g = findGroup(groups, g, a.Group); g == nil || a.Index < 0 || a.Index >= len(g.placement) {
			s.unreserve(plan.Assignments)
			return fmt.Errorf("plan places execution group %s#%d, want one of the job's slot-sharing groups within its parallelism", a.Group, a.Index)
		}
		start := len(all)
		for _, v := range g.members {
			if a.Index < v.p {
				all = append(all, SubtaskID{Vertex: v.id, Index: a.Index})
				d.taskSlot[v.offset+a.Index] = int32(k)
			}
		}
		d.slots[k] = SlotAssignment{Slot: SlotID{TaskManager: TaskManagerID(a.Slot.TaskManager), Index: a.Slot.Index},
			Subtasks: all[start:len(all):len(all)]}
		d.slotLive[k] = int32(len(all) - start)
		g.placement[a.Index] = a.Slot.TaskManager
	}
	s.placeKeyGroups(eff.Vertices, d)
	d.live = total
	if len(s.arrivals.expected) == 0 {
		// What the launcher named has all come: from now on, as with standalone scripts,
		// any TaskManager may be followed by another.
		s.arrivals.known = false
	}
	s.spare = deploymentMemory{}
	s.attempt = d.attempt
	s.dep = d
	s.statusCause = fmt.Sprintf("attempt %d deployed", d.attempt)
	s.emit(eff)
	return nil
}

// unreserve frees the slots of assignments reserved by a deploy that cannot go on.
func (s *Scheduler) unreserve(assignments []allocator.Assignment) {
	for _, a := range assignments {
		if _, err := s.pool.Free(time.Time{}, a.Slot); err != nil {
			s.log.Error("rolling back reservation", "slot", a.Slot, "err", err)
		}
	}
}

// placedVertex is one vertex of a slot-sharing group in a new attempt: its parallelism
// and the position of its subtask 0 in the attempt's task list.
type placedVertex struct {
	id        VertexID
	p, offset int
}

// deployGroup is one slot-sharing group of a plan: its vertices and, per execution group
// index, the TaskManager it is placed on (the next attempt's locality).
type deployGroup struct {
	name      string
	members   []placedVertex
	placement []string
}

// deployGroups lists the slot-sharing groups of a plan with their placement slices, cut
// from one backing array (returned too, to be reused once the placement is forgotten).
func (s *Scheduler) deployGroups(plan allocator.Plan) ([]deployGroup, []string) {
	pgs := s.groupSlots(plan)
	n := 0
	for _, g := range pgs {
		n += g.slots
	}
	mem := sized(s.spare.placement, n)
	backing := mem
	out := make([]deployGroup, len(pgs))
	for i, g := range pgs {
		out[i] = deployGroup{name: g.name, placement: backing[:g.slots:g.slots]}
		backing = backing[g.slots:]
	}
	return out, mem
}

// findGroup returns the group named name: cur when it is that group (plans list a
// group's execution groups in runs), else the first match in groups, or nil.
func findGroup(groups []deployGroup, cur *deployGroup, name string) *deployGroup {
	if cur != nil && cur.name == name {
		return cur
	}
	for i := range groups {
		if groups[i].name == name {
			return &groups[i]
		}
	}
	return nil
}

// onTaskStateChanged applies a subtask report of the current attempt.
func (s *Scheduler) onTaskStateChanged(now time.Time, ev TaskStateChanged) {
	d := s.dep
	if d == nil || ev.Attempt != d.attempt {
		s.stale("task state", "attempt", ev.Attempt, "subtask", ev.Subtask, "state", ev.State)
		return
	}
	pos, ok := d.task(ev.Subtask)
	if !ok || d.tasks[pos].IsTerminal() {
		s.stale("task state", "attempt", ev.Attempt, "subtask", ev.Subtask, "state", ev.State)
		return
	}
	if !ev.State.IsTerminal() {
		return
	}
	d.tasks[pos] = taskStopped
	k := d.taskSlot[pos]
	slot := d.slots[k].Slot
	d.live--
	d.slotLive[k]--
	if ev.State == TaskFinished {
		d.finished++
	}
	if d.ending && d.slotLive[k] == 0 {
		s.freeSlot(now, slot)
	}
	if ev.State == TaskFailed && ev.LostPeer != "" {
		s.onPeerConnectionLost(now, ev, slot)
		return
	}
	if ev.State == TaskFailed && d.ending && !ev.Unrecoverable {
		// The attempt is already being cancelled: a subtask that fails now most often
		// fails because a peer was cancelled first (its channel released under it). That
		// is part of the cancellation, not a new failure of the job.
		s.log.Info("subtask failed while its attempt was being cancelled", "attempt", ev.Attempt,
			"subtask", ev.Subtask.String(), "task_manager", slot.TaskManager, "err", ev.Error)
		s.state.onTasksChanged(now)
		return
	}
	if ev.State == TaskFailed || (ev.State == TaskCanceled && !d.ending) {
		cause := ev.Error
		if cause == "" {
			cause = "task " + string(ev.State)
		}
		cause = fmt.Sprintf("subtask %s of attempt %d on %s: %s", ev.Subtask, ev.Attempt, slot, cause)
		s.addException(ExceptionEntry{Time: now, Attempt: ev.Attempt, Subtask: ev.Subtask.String(),
			TaskManager: slot.TaskManager, Error: cause, Unrecoverable: ev.Unrecoverable})
		s.state.onTaskFailed(now, cause, ev.Unrecoverable, TriggerRecoverableFailover)
		return
	}
	s.state.onTasksChanged(now)
}

// endDeployment starts tearing the attempt down: cancel what still runs, free the slots
// of what already stopped; every further slot is freed when its last subtask stops.
func (s *Scheduler) endDeployment(now time.Time, reason string) {
	d := s.dep
	if d == nil || d.ending {
		return
	}
	d.ending = true
	if d.live > 0 {
		s.emit(CancelAttempt{Attempt: d.attempt, Reason: reason})
	}
	for k, live := range d.slotLive {
		if live == 0 {
			s.freeSlot(now, d.slots[k].Slot)
		}
	}
}

// releaseDeployment forgets the attempt, freeing whatever slots it still holds (suspend,
// or Finished while subtasks still run). Its placement is kept for locality.
func (s *Scheduler) releaseDeployment(now time.Time) {
	d := s.dep
	if d == nil {
		return
	}
	// Every slot still held is reserved: a TaskManager can only become free of
	// reservations at its last slot here, so releasing it after the loop changes nothing.
	held := func(yield func(allocator.SlotRef) bool) {
		for k, live := range d.slotLive {
			if live > 0 || (live == 0 && !d.ending) {
				if !yield(allocator.SlotRef{TaskManager: string(d.slots[k].Slot.TaskManager), Index: d.slots[k].Slot.Index}) {
					return
				}
			}
		}
	}
	registered, release, err := s.pool.FreeAll(now, held)
	if registered > 0 {
		s.timersDirty = true
	}
	if err != nil {
		s.log.Error("free slots of the released attempt", "attempt", d.attempt, "err", err)
	}
	for _, tm := range release {
		s.releaseIdleBlocked(TaskManagerID(tm))
	}
	// The placement before this one is no longer needed: its memory and the attempt's
	// bookkeeping go to the next attempt.
	s.spare = deploymentMemory{tasks: d.tasks, taskSlot: d.taskSlot, slotLive: d.slotLive, placement: s.lastPlacementMem}
	s.lastPlacement, s.lastPlacementMem = d.placement, d.placementMem
	s.dep = nil
	s.peerFailures = nil
}

// freeSlot returns a slot to the pool (or releases it on a blocked node); a TaskManager on
// a blocked node left with nothing is released whole.
func (s *Scheduler) freeSlot(now time.Time, slot SlotID) {
	if !s.pool.Has(string(slot.TaskManager)) {
		return
	}
	s.timersDirty = true
	release, err := s.pool.Free(now, allocator.SlotRef{TaskManager: string(slot.TaskManager), Index: slot.Index})
	if err != nil {
		s.log.Error("free slot", "slot", slot, "err", err)
		return
	}
	if release {
		s.releaseIdleBlocked(slot.TaskManager)
	}
}

// releaseIdleBlocked releases a TaskManager on a blocked node whose last reserved slot was
// just freed. Nothing runs there any more, so no state needs telling (this may run while a
// state is entered): it is released quietly.
func (s *Scheduler) releaseIdleBlocked(tm TaskManagerID) {
	s.emit(ReleaseTaskManager{TaskManager: tm, Reason: "node is blocked and the task manager holds no running subtask"})
	s.pool.Remove(string(tm))
	s.dropTaskManager(tm)
}

// dropTaskManager marks the subtasks of the current attempt on a lost TaskManager as
// gone and returns how many were still running.
func (s *Scheduler) dropTaskManager(tm TaskManagerID) int {
	d := s.dep
	if d == nil {
		return 0
	}
	if d.tmSlots == nil {
		d.tmSlots = d.slotsByTaskManager()
	}
	lost := 0
	for _, k := range d.tmSlots[tm] {
		for _, st := range d.slots[k].Subtasks {
			pos, _ := d.task(st)
			if !d.tasks[pos].IsTerminal() {
				d.tasks[pos] = taskStopped
				d.live--
				lost++
			}
		}
		d.slotLive[k] = -1
	}
	delete(d.tmSlots, tm)
	return lost
}

// slotsByTaskManager indexes the attempt's slot positions by TaskManager, every list cut
// from one backing array.
func (d *deployment) slotsByTaskManager() map[TaskManagerID][]int32 {
	perTM := make(map[TaskManagerID]int32)
	for _, a := range d.slots {
		perTM[a.Slot.TaskManager]++
	}
	out := make(map[TaskManagerID][]int32, len(perTM))
	backing := make([]int32, 0, len(d.slots))
	for k, a := range d.slots {
		tm := a.Slot.TaskManager
		list, ok := out[tm]
		if !ok {
			list = backing[len(backing) : len(backing) : len(backing)+int(perTM[tm])]
			backing = backing[:len(backing)+int(perTM[tm])]
		}
		out[tm] = append(list, int32(k))
	}
	return out
}

// parallelism returns the current attempt's parallelism (nil when none runs).
func (s *Scheduler) parallelism() map[VertexID]int {
	if s.dep == nil {
		return nil
	}
	return maps.Clone(s.dep.parallelism)
}

// planGroup is one slot-sharing group of a plan with the number of slots it got.
type planGroup struct {
	name  string
	slots int
}

// groupSlots counts the slots each group got in a plan.
func (s *Scheduler) groupSlots(plan allocator.Plan) []planGroup {
	var out []planGroup
	for _, v := range s.vertices {
		found := false
		for i := range out {
			if out[i].name == v.group {
				out[i].slots = max(out[i].slots, plan.Parallelism[string(v.id)])
				found = true
			}
		}
		if !found {
			out = append(out, planGroup{name: v.group, slots: plan.Parallelism[string(v.id)]})
		}
	}
	return out
}
