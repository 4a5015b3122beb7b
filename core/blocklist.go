package core

import (
	"fmt"
	"time"

	"github.com/tidestream/tide/core/blocklist"
)

// blockNodes adds or merges blocked nodes. Free slots on them are released at once;
// TaskManagers there with nothing running are released whole; with
// MARK_BLOCKED_AND_EVACUATE_TASKS the TaskManagers still running subtasks are released
// too and the job restarts elsewhere (without using up the restart strategy).
func (s *Scheduler) blockNodes(now time.Time, nodes []blocklist.BlockedNode) {
	for i := range nodes {
		// Only a request that named no end gets the default timeout; an explicit permanent
		// block (endTimestamp Long.MAX_VALUE, seed 003) stays permanent.
		if nodes[i].EndUnset && nodes[i].End.IsZero() && s.opts.BlocklistDefaultTimeout > 0 {
			start := nodes[i].Start
			if start.IsZero() {
				start = now
			}
			nodes[i].End = start.Add(s.opts.BlocklistDefaultTimeout)
		}
		nodes[i].EndUnset = false
		if err := nodes[i].Validate(now); err != nil {
			s.log.Warn("blocked node refused", "node", blocklist.Quote(nodes[i].ID, 64), "err", err)
		}
	}
	added, merged := s.blocked.Add(now, nodes...)
	if len(added)+len(merged) == 0 {
		return
	}
	s.emit(BlocklistChanged{Blocked: s.blocked.All()})
	var idle, evacuate []TaskManagerID
	for i, n := range append(added, merged...) {
		idleOnNode, busy := s.pool.ReleaseBlocked(n.ID)
		// A merge logs the length of the merged cause, not the cause again: repeated merges of
		// a long cause must not grow the log with every request.
		if i < len(added) {
			s.log.Info("node blocked", "node", n.ID, "action", n.Action, "end", n.End, "cause", blocklist.CauseSummary(n.Cause),
				"idle_task_managers", len(idleOnNode), "busy_task_managers", len(busy))
		} else {
			s.log.Info("node blocking merged", "node", n.ID, "action", n.Action, "end", n.End, "cause_bytes", len(n.Cause),
				"idle_task_managers", len(idleOnNode), "busy_task_managers", len(busy))
		}
		for _, tm := range idleOnNode {
			idle = append(idle, TaskManagerID(tm))
		}
		if n.Action.Evacuates() {
			for _, tm := range busy {
				evacuate = append(evacuate, TaskManagerID(tm))
			}
		}
	}
	if !s.opts.KeepTaskManagers {
		s.releaseTaskManagers(now, idle, "node is blocked", TriggerResourceLost)
	}
	if s.standby != nil && s.state.name() == StateExecuting {
		s.planStandbys() // no standby copy stays on a blocked node
	}
	if len(evacuate) == 0 {
		s.state.onResourcesChanged(now, TriggerResourceLost)
		return
	}
	if e, ok := s.state.(*executing); ok && e.startWarmup(now, nil, TriggerBlocklistEvacuation, "evacuated from blocked node", evacuate) {
		// The evacuated TaskManagers run on until the new owners of their ranges are warm.
		return
	}
	s.evacuate(now, evacuate)
}

// evacuate stops the subtasks of TaskManagers on blocked nodes: it releases them, or
// (KeepTaskManagers) restarts the job elsewhere and keeps their processes.
func (s *Scheduler) evacuate(now time.Time, tms []TaskManagerID) {
	if s.opts.KeepTaskManagers {
		// The TaskManagers stay registered and unused; evacuation stops their subtasks by
		// restarting the job elsewhere, not their processes.
		s.state.onTaskFailed(now, fmt.Sprintf("evacuated from blocked node (task managers %v kept)", tms), false, TriggerBlocklistEvacuation)
		return
	}
	s.releaseTaskManagers(now, tms, "evacuated from blocked node", TriggerBlocklistEvacuation)
}

// unblockNodes removes blocked nodes; TaskManagers there may register again.
func (s *Scheduler) unblockNodes(now time.Time, ids []NodeID) {
	raw := make([]blocklist.NodeID, len(ids))
	for i, id := range ids {
		raw[i] = string(id)
	}
	if removed := s.blocked.Remove(raw...); len(removed) > 0 {
		s.log.Info("nodes unblocked", "nodes", len(removed))
		s.emit(BlocklistChanged{Blocked: s.blocked.All()})
		s.state.onResourcesChanged(now, TriggerNewResourceAvailable)
	}
}

// expireBlockedNodes removes the blocked nodes whose end has passed.
func (s *Scheduler) expireBlockedNodes(now time.Time) {
	if removed := s.blocked.RemoveExpired(now); len(removed) > 0 {
		s.log.Info("blocked nodes expired", "nodes", len(removed))
		s.emit(BlocklistChanged{Blocked: s.blocked.All()})
		s.state.onResourcesChanged(now, TriggerNewResourceAvailable)
	}
}
