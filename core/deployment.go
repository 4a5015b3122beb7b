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
	attempt     AttemptID
	parallelism map[VertexID]int
	offset      map[VertexID]int // position of the vertex's subtask 0 in tasks
	tasks       []TaskState
	taskSlot    []int32 // position in slots
	slots       []SlotAssignment
	slotLive    []int32 // non-terminal subtasks per slot; -1: slot gone with its TaskManager
	tmSlots     map[TaskManagerID][]int32
	live        int // non-terminal subtasks
	finished    int
	ending      bool                // being cancelled: slots are freed as their subtasks stop
	placement   map[string][]string // group → TaskManager per subtask index (locality)
}

// task returns the position of a subtask, or false if it is not part of the attempt.
func (d *deployment) task(st SubtaskID) (int, bool) {
	off, ok := d.offset[st.Vertex]
	if !ok || st.Index < 0 || st.Index >= d.parallelism[st.Vertex] {
		return 0, false
	}
	return off + st.Index, true
}

// planDeployment decides a plan on the free slots; ok is false when they are insufficient.
func (s *Scheduler) planDeployment() (allocator.Plan, bool) {
	s.freeBuf = s.pool.FreeSlots(s.freeBuf)
	return allocator.Decide(s.requirements(), s.freeBuf, allocator.Options{
		PreferMinimalTaskManagers: s.opts.PreferMinimalTaskManagers,
		Previous:                  s.lastPlacement,
	})
}

// deploy reserves the plan's slots and starts a new attempt. If a slot vanished since
// planning, every reservation is rolled back and an error is returned.
func (s *Scheduler) deploy(plan allocator.Plan) error {
	if s.beforeReserve != nil {
		s.beforeReserve()
	}
	for i, a := range plan.Assignments {
		if err := s.pool.Reserve(a.Slot); err != nil {
			for _, b := range plan.Assignments[:i] {
				if _, ferr := s.pool.Free(time.Time{}, b.Slot); ferr != nil {
					s.log.Error("rolling back reservation", "slot", b.Slot, "err", ferr)
				}
			}
			s.metrics.ReservationFailures++
			return fmt.Errorf("reserve %d planned slots: %w", len(plan.Assignments), err)
		}
	}
	s.attempt++
	n := len(plan.Assignments)
	d := &deployment{
		attempt:     s.attempt,
		parallelism: make(map[VertexID]int, len(s.vertices)),
		offset:      make(map[VertexID]int, len(s.vertices)),
		slots:       make([]SlotAssignment, n),
		slotLive:    make([]int32, n),
		tmSlots:     make(map[TaskManagerID][]int32, 64),
		placement:   make(map[string][]string),
	}
	eff := Deploy{Attempt: s.attempt, RestoreFrom: s.latestCheckpoint, Slots: d.slots}
	type placed struct {
		id        VertexID
		p, offset int
	}
	byGroup := make(map[string][]placed)
	total := 0
	for _, v := range s.vertices {
		p := plan.Parallelism[string(v.id)]
		d.parallelism[v.id] = p
		d.offset[v.id] = total
		byGroup[v.group] = append(byGroup[v.group], placed{id: v.id, p: p, offset: total})
		total += p
		eff.Vertices = append(eff.Vertices, VertexDeployment{Vertex: v.id, Parallelism: p, MaxParallelism: v.maxP})
	}
	d.tasks = make([]TaskState, total)
	d.taskSlot = make([]int32, total)
	for _, g := range s.groupSlots(plan) {
		d.placement[g.name] = make([]string, g.slots)
	}
	perTM := make(map[TaskManagerID]int)
	for _, a := range plan.Assignments {
		perTM[TaskManagerID(a.Slot.TaskManager)]++
	}
	tmBacking := make([]int32, 0, n) // one backing array for every TaskManager's slot list
	for _, a := range plan.Assignments {
		tm := TaskManagerID(a.Slot.TaskManager)
		if _, ok := d.tmSlots[tm]; !ok {
			d.tmSlots[tm] = tmBacking[len(tmBacking) : len(tmBacking) : len(tmBacking)+perTM[tm]]
			tmBacking = tmBacking[:len(tmBacking)+perTM[tm]]
		}
	}
	all := make([]SubtaskID, 0, total) // one backing array for every slot's subtask list
	for k, a := range plan.Assignments {
		slot := SlotID{TaskManager: TaskManagerID(a.Slot.TaskManager), Index: a.Slot.Index}
		start := len(all)
		for _, v := range byGroup[a.Group] {
			if a.Index < v.p {
				all = append(all, SubtaskID{Vertex: v.id, Index: a.Index})
				pos := v.offset + a.Index
				d.tasks[pos] = TaskDeploying
				d.taskSlot[pos] = int32(k)
			}
		}
		d.slots[k] = SlotAssignment{Slot: slot, Subtasks: all[start:len(all):len(all)]}
		d.slotLive[k] = int32(len(all) - start)
		d.tmSlots[slot.TaskManager] = append(d.tmSlots[slot.TaskManager], int32(k))
		d.placement[a.Group][a.Index] = a.Slot.TaskManager
	}
	d.live = total
	s.dep = d
	s.statusCause = fmt.Sprintf("attempt %d deployed", d.attempt)
	s.emit(eff)
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
	d.tasks[pos] = ev.State
	if !ev.State.IsTerminal() {
		return
	}
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
	for k, live := range d.slotLive {
		if live > 0 || (live == 0 && !d.ending) {
			s.freeSlot(now, d.slots[k].Slot)
		}
	}
	s.lastPlacement = d.placement
	s.dep = nil
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
		// Nothing runs there any more, so no state needs telling (this may run while a
		// state is entered): release it quietly.
		s.emit(ReleaseTaskManager{TaskManager: slot.TaskManager, Reason: "node is blocked and the task manager holds no running subtask"})
		s.pool.Remove(string(slot.TaskManager))
		s.dropTaskManager(slot.TaskManager)
	}
}

// dropTaskManager marks the subtasks of the current attempt on a lost TaskManager as
// gone and returns how many were still running.
func (s *Scheduler) dropTaskManager(tm TaskManagerID) int {
	d := s.dep
	if d == nil {
		return 0
	}
	lost := 0
	for _, k := range d.tmSlots[tm] {
		for _, st := range d.slots[k].Subtasks {
			pos, _ := d.task(st)
			if !d.tasks[pos].IsTerminal() {
				d.tasks[pos] = TaskFailed
				d.live--
				lost++
			}
		}
		d.slotLive[k] = -1
	}
	delete(d.tmSlots, tm)
	return lost
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
