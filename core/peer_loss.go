package core

import (
	"fmt"
	"time"
)

// A TaskManager that dies breaks the data connections of its peers: their subtasks fail
// with "lost connection to peer X" (TaskStateChanged.LostPeer), and those reports race
// with the loss of X itself. Such a failure is part of X's loss, not a failure of its own:
// no exception entry, no restart strategy charge in reactive mode, the restart recorded as
// RESOURCE_LOST. Only when X turns out to be alive (still registered once the attempt
// has stopped: the connection broke, X did not) is it a failure of the job after all.

// peerFailure is a subtask failure on a broken connection to a TaskManager that was still
// registered when the failure came.
type peerFailure struct {
	peer  TaskManagerID
	entry ExceptionEntry
	// charged: the restart that followed was charged to the restart strategy (outside
	// reactive mode a loss is charged too).
	charged bool
}

// onPeerConnectionLost applies a subtask FAILED on its broken connection to ev.LostPeer.
func (s *Scheduler) onPeerConnectionLost(now time.Time, ev TaskStateChanged, slot SlotID) {
	cause := fmt.Sprintf("subtask %s of attempt %d on %s: lost connection to peer %s", ev.Subtask, ev.Attempt, slot, ev.LostPeer)
	if ev.Error != "" {
		cause += ": " + ev.Error
	}
	if s.dep.ending {
		// The attempt is being torn down already (X's loss came first, or another failure).
		s.log.Info("subtask failed on its lost peer's connection", "cause", cause)
		s.state.onTasksChanged(now)
		return
	}
	if s.pool.Has(string(ev.LostPeer)) {
		s.peerFailures = append(s.peerFailures, peerFailure{peer: ev.LostPeer, charged: !s.opts.Reactive,
			entry: ExceptionEntry{Time: now, Attempt: ev.Attempt, Subtask: ev.Subtask.String(), TaskManager: slot.TaskManager, Error: cause}})
	}
	s.state.onTaskFailed(now, cause, false, TriggerResourceLost)
}

// peerLost: TaskManager tm is lost, so the failures on connections to it were its loss.
func (s *Scheduler) peerLost(tm TaskManagerID) {
	keep := s.peerFailures[:0]
	for _, f := range s.peerFailures {
		if f.peer != tm {
			keep = append(keep, f)
		}
	}
	s.peerFailures = keep
}

// peersSurvived is called once the restarting attempt has stopped: a peer whose
// connection broke but that is still registered did not die, so the failures on it were
// the job's own after all. They enter the exception history, and in reactive mode the
// restart strategy is charged now: the job fails if it allows no more restarts, otherwise
// the restart waits its backoff. It returns true when the restart does not proceed now.
func (r *restarting) peersSurvived(now time.Time) bool {
	s := r.s
	var survived []peerFailure
	for _, f := range s.peerFailures {
		if s.pool.Has(string(f.peer)) {
			survived = append(survived, f)
		}
	}
	s.peerFailures = nil
	if len(survived) == 0 {
		return false
	}
	for _, f := range survived {
		s.addException(f.entry)
	}
	first := survived[0]
	s.log.Info("the peer of a broken connection is still registered: a failure, not a loss", "peer", first.peer, "failures", len(survived))
	if first.charged {
		return false
	}
	cause := first.entry.Error
	s.restart.NotifyFailure(now)
	s.history.retrigger(TriggerRecoverableFailover, cause)
	if !s.restart.CanRestart() {
		s.finish(now, StatusFailed, fmt.Sprintf("restart strategy %s does not allow another restart: %s", s.restart.Name(), cause))
		return true
	}
	r.afterFailure = true
	if b := s.restart.Backoff(); b > 0 {
		r.backoffDone = false
		r.backoffUntil = now.Add(b)
		s.arm(now, timerRestartBackoff, b, 0)
		return true
	}
	return false
}
