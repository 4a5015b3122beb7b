package core

import "time"

// timerKind says what a timer is for; it shows in StartTimer.Kind.
type timerKind string

const (
	timerResourceWait       timerKind = "resource-wait-timeout"
	timerCooldown           timerKind = "cooldown"
	timerStabilization      timerKind = "stabilization"
	timerTriggerEvaluation  timerKind = "trigger-evaluation"
	timerScalingIntervalMax timerKind = "scaling-interval-max"
	timerRestartBackoff     timerKind = "restart-backoff"
	timerHeartbeat          timerKind = "heartbeat-check"
	timerSlotIdle           timerKind = "slot-idle-check"
	timerBlocklistExpiry    timerKind = "blocklist-expiry"
	timerWarmup             timerKind = "warmup-timeout"
	timerAdoption           timerKind = "task-adoption-timeout"
)

// global timers belong to the scheduler, not to a state: they are re-armed with the new
// version after every transition.
func (k timerKind) global() bool {
	return k == timerHeartbeat || k == timerSlotIdle || k == timerBlocklistExpiry
}

// timerEntry is an armed timer. phase ties a transition-manager timer to the phase that
// armed it, so a timer of a left phase does nothing (Flink's runIfPhase).
type timerEntry struct {
	id       TimerID
	kind     timerKind
	version  uint64
	phase    uint64
	deadline time.Time
}

type timerTable struct {
	next    TimerID
	pending map[TimerID]timerEntry
	global  map[timerKind]timerEntry
}

func (t *timerTable) clear() {
	t.pending = make(map[TimerID]timerEntry)
	t.global = make(map[timerKind]timerEntry)
}

// arm emits a StartTimer for the current state version.
func (s *Scheduler) arm(now time.Time, kind timerKind, after time.Duration, phase uint64) timerEntry {
	after = max(after, 0)
	s.timers.next++
	e := timerEntry{id: s.timers.next, kind: kind, version: s.version, phase: phase, deadline: now.Add(after)}
	s.timers.pending[e.id] = e
	s.emit(StartTimer{Timer: e.id, Kind: string(kind), After: after, Version: s.version})
	return e
}

// armGlobal keeps one timer of a global kind, at the earliest deadline asked for.
func (s *Scheduler) armGlobal(now time.Time, kind timerKind, deadline time.Time) {
	if cur, ok := s.timers.global[kind]; ok {
		if !cur.deadline.After(deadline) {
			return
		}
		delete(s.timers.pending, cur.id)
	}
	s.timers.global[kind] = s.arm(now, kind, deadline.Sub(now), 0)
}

// armGlobalTimers arms the heartbeat, idle-slot and blocklist-expiry timers as needed.
func (s *Scheduler) armGlobalTimers(now time.Time) {
	s.timersDirty = false
	if s.state.name() == StateFinished {
		return
	}
	if s.opts.HeartbeatTimeout > 0 {
		if d, ok := s.pool.NextHeartbeatDeadline(s.opts.HeartbeatTimeout); ok {
			s.armGlobal(now, timerHeartbeat, d)
		}
	}
	if s.opts.SlotIdleTimeout > 0 && s.requiredForIdle() >= 0 {
		if d, ok := s.pool.NextIdleDeadline(s.opts.SlotIdleTimeout); ok {
			if !d.After(now) {
				// Idle long enough but kept for the requirement: check again a timeout later.
				d = now.Add(s.opts.SlotIdleTimeout)
			}
			s.armGlobal(now, timerSlotIdle, d)
		}
	}
	if d, ok := s.blocked.NextExpiry(); ok {
		s.armGlobal(now, timerBlocklistExpiry, d)
	}
}

// onTimerFired drops stale timers and routes the others.
func (s *Scheduler) onTimerFired(now time.Time, ev TimerFired) {
	e, ok := s.timers.pending[ev.Timer]
	if !ok || e.version != ev.Version || ev.Version != s.version {
		s.stale("timer", "timer", ev.Timer, "version", ev.Version, "current_version", s.version)
		return
	}
	delete(s.timers.pending, ev.Timer)
	if e.kind.global() {
		delete(s.timers.global, e.kind)
		switch e.kind {
		case timerHeartbeat:
			s.checkHeartbeats(now)
		case timerSlotIdle:
			s.releaseIdleTaskManagers(now)
		case timerBlocklistExpiry:
			s.expireBlockedNodes(now)
		}
		return
	}
	s.state.onTimer(now, e)
}
