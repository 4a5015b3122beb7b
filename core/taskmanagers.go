package core

import (
	"errors"
	"time"

	"github.com/tidestream/tide/core/slotpool"
)

// onTaskManagerRegistered adds a TaskManager's slots, unless its node is blocked.
func (s *Scheduler) onTaskManagerRegistered(now time.Time, ev TaskManagerRegistered) {
	if s.state.name() == StateFinished {
		s.emit(RejectTaskManager{TaskManager: ev.TaskManager, Reason: "job has finished"})
		return
	}
	err := s.pool.Register(now, string(ev.TaskManager), string(ev.Node), ev.Slots)
	switch {
	case errors.Is(err, slotpool.ErrDuplicate):
		s.log.Info("duplicate registration ignored", "task_manager", ev.TaskManager, "node", ev.Node)
		return
	case errors.Is(err, slotpool.ErrBlocked):
		s.metrics.RejectedRegistrations++
		s.log.Warn("registration from blocked node refused", "task_manager", ev.TaskManager, "node", ev.Node)
		s.emit(RejectTaskManager{TaskManager: ev.TaskManager, Reason: err.Error()})
		return
	case err != nil:
		s.log.Warn("registration refused", "task_manager", ev.TaskManager, "node", ev.Node, "err", err)
		s.emit(RejectTaskManager{TaskManager: ev.TaskManager, Reason: err.Error()})
		return
	}
	s.registrations++
	s.lastRegistered = now
	s.arrived(ev.TaskManager)
	s.pendingWorkers = max(0, s.pendingWorkers-1)
	s.log.Info("task manager registered", "task_manager", ev.TaskManager, "node", ev.Node, "slots", ev.Slots,
		"blocked", s.blocked.IsBlocked(string(ev.Node)), "in_flight", s.inFlight())
	s.onReportedTasks(ev.TaskManager, ev.Tasks)
	s.state.onResourcesChanged(now, TriggerNewResourceAvailable)
}

// loseTaskManager forgets a TaskManager at once (connection dropped, worker terminated).
// Its running subtasks count as failed.
func (s *Scheduler) loseTaskManager(now time.Time, tm TaskManagerID, reason string, trigger RescaleTrigger) {
	s.loseTaskManagers(now, []TaskManagerID{tm}, reason, trigger)
}

// loseTaskManagers forgets several TaskManagers first and only then tells the state, so
// no plan is made on a TaskManager that is about to go in the same step.
func (s *Scheduler) loseTaskManagers(now time.Time, tms []TaskManagerID, reason string, trigger RescaleTrigger) {
	lost := 0
	var first TaskManagerID
	for _, tm := range tms {
		s.pool.Remove(string(tm))
		s.peerLost(tm)
		n := s.dropTaskManager(tm)
		s.log.Info("task manager lost", "task_manager", tm, "reason", reason, "running_subtasks", n)
		if n > 0 && lost == 0 {
			first = tm
		}
		lost += n
	}
	// Ask for replacements first: the state then sees them on their way and a redeployment
	// waits for them (bounded) instead of running below what is coming.
	s.requestWorkers(now)
	if lost > 0 {
		cause := "task manager " + string(first) + " lost: " + reason
		s.addException(ExceptionEntry{Time: now, Attempt: s.attempt, TaskManager: first, Error: cause})
		s.state.onTaskFailed(now, cause, false, trigger)
	} else {
		s.state.onTasksChanged(now)
		s.state.onResourcesChanged(now, TriggerResourceLost)
	}
}

// releaseTaskManagers releases several TaskManagers in one go.
func (s *Scheduler) releaseTaskManagers(now time.Time, tms []TaskManagerID, reason string, trigger RescaleTrigger) {
	var gone []TaskManagerID
	for _, tm := range tms {
		if s.pool.Has(string(tm)) {
			s.emit(ReleaseTaskManager{TaskManager: tm, Reason: reason, KeepProcess: s.opts.KeepTaskManagers})
			gone = append(gone, tm)
		}
	}
	if len(gone) > 0 {
		s.loseTaskManagers(now, gone, "released: "+reason, trigger)
	}
}

// checkHeartbeats loses every TaskManager silent for the heartbeat timeout.
func (s *Scheduler) checkHeartbeats(now time.Time) {
	var expired []TaskManagerID
	for _, tm := range s.pool.HeartbeatExpired(now, s.opts.HeartbeatTimeout) {
		expired = append(expired, TaskManagerID(tm))
	}
	s.metrics.HeartbeatTimeouts += len(expired)
	s.releaseTaskManagers(now, expired, "heartbeat of task manager timed out after "+s.opts.HeartbeatTimeout.String(), TriggerResourceLost)
}

// releaseIdleTaskManagers releases TaskManagers idle for slot.idle.timeout whose slots the
// job does not need.
func (s *Scheduler) releaseIdleTaskManagers(now time.Time) {
	if s.opts.KeepTaskManagers {
		return
	}
	required := s.requiredForIdle()
	if d := s.dep; d != nil {
		required = max(required, len(d.slotLive))
	}
	var idle []TaskManagerID
	for _, tm := range s.pool.IdleTaskManagers(now, s.opts.SlotIdleTimeout, required) {
		idle = append(idle, TaskManagerID(tm))
	}
	s.metrics.ReleasedIdleTaskManagers += len(idle)
	s.releaseTaskManagers(now, idle, "idle for "+s.opts.SlotIdleTimeout.String(), TriggerResourceLost)
}

// requestWorkers asks an active driver for the workers still missing.
func (s *Scheduler) requestWorkers(time.Time) {
	aw := s.opts.ActiveWorkers
	if !aw.Enabled || s.state.name() == StateFinished || s.state.name() == StateCreated {
		return
	}
	usable, _ := s.pool.Counts()
	want := s.requiredSlots()
	if s.opts.Reactive {
		want = aw.MaxWorkers * aw.SlotsPerWorker
	}
	missing := want - usable - s.pendingWorkers*aw.SlotsPerWorker
	if missing <= 0 {
		return
	}
	count := (missing + aw.SlotsPerWorker - 1) / aw.SlotsPerWorker
	if aw.MaxWorkers > 0 {
		count = min(count, aw.MaxWorkers-s.pool.Len()-s.pendingWorkers)
	}
	if count <= 0 {
		return
	}
	s.pendingWorkers += count
	s.emit(RequestWorkers{Count: count})
}
