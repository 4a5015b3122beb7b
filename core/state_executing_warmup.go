package core

import (
	"fmt"
	"time"

	"github.com/tidestream/tide/core/allocator"
)

// executingWarmup is the part of Executing that holds a planned move back until its
// warm-up copies have caught up (KIP-441): the job keeps running at the old parallelism
// while the destination TaskManagers copy the ranges they will own; the switch happens
// when every copy holds the newest completed checkpoint, when the copies that are left
// have failed, or at state.warmup.timeout, whichever comes first.
type executingWarmup struct {
	warm      *warmupRound
	warmTimer TimerID
	warmStart time.Time
	warmUntil time.Time
}

// startWarmup begins a round towards target (nil: what the predicted plan gives) instead
// of switching at once. It reports false when there is nothing to warm up: the caller
// then switches now.
func (e *executing) startWarmup(now time.Time, target allocator.Parallelism, trigger RescaleTrigger, cause string, evacuate []TaskManagerID) bool {
	s := e.s
	if !s.warmupEnabled() || s.dep == nil {
		return false
	}
	skip := make(map[TaskManagerID]bool, len(evacuate))
	for _, tm := range evacuate {
		skip[tm] = true
	}
	r, ok := s.newWarmupRound(now, target, skip)
	if !ok {
		return false
	}
	r.trigger, r.cause, r.evacuate = trigger, cause, evacuate
	if e.warm != nil {
		if sameTasks(e.warm, r) && slicesEqualTM(e.warm.evacuate, evacuate) {
			e.warm.trigger, e.warm.cause = trigger, cause
			return true
		}
		s.emit(StopWarmup{Round: e.warm.id, Reason: "replanned"})
		r.start = e.warmStart
	} else {
		e.warmStart, e.warmUntil = now, now.Add(s.opts.WarmupTimeout)
		e.warmTimer = s.arm(now, timerWarmup, s.opts.WarmupTimeout, 0).id
	}
	r.id = s.nextWarmupRound()
	e.warm = r
	s.log.Info("warming up before the switch", "round", r.id, "trigger", trigger, "target", formatParallelism(s.order, r.target),
		"copies", len(r.copies), "queued", len(r.queued), "checkpoint", s.latestCheckpoint, "until", e.warmUntil)
	s.emit(WarmUp{Round: r.id, Kind: WarmupPlanned, Checkpoint: s.latestCheckpoint, Tasks: r.tasks()})
	return true
}

func slicesEqualTM(a, b []TaskManagerID) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

// maybeSwitch switches once every copy is ready.
func (e *executing) maybeSwitch(now time.Time) {
	if e.warm == nil || !e.warm.allReady(e.s.latestCheckpoint) {
		return
	}
	for _, c := range e.warm.copies {
		if c.failed == "" {
			e.switchNow(now, "warm-ups caught up")
			return
		}
	}
	e.switchNow(now, "every warm-up failed")
}

// switchNow ends the round and makes the move: the rescale (or evacuation) it held back.
func (e *executing) switchNow(now time.Time, reason string) {
	s := e.s
	r := e.warm
	e.warm = nil
	delete(s.timers.pending, e.warmTimer)
	sum := r.summary(now, s.latestCheckpoint)
	sum.Duration = now.Sub(e.warmStart)
	sum.TimedOut = reason == reasonWarmupTimeout
	s.log.Info("switching after warm-up", "round", r.id, "reason", reason, "ready", sum.Ready, "failed", sum.Failed,
		"planned", sum.Planned, "bytes", sum.Bytes, "took", sum.Duration)
	s.emit(StopWarmup{Round: r.id, Reason: reason})
	s.history.nextWarmup = &sum
	if len(r.evacuate) > 0 {
		s.evacuate(now, r.evacuate)
		return
	}
	s.metrics.NumRestarts++
	s.history.begin(now, r.trigger, r.cause, StateExecuting, s.dep.parallelism, s.order)
	s.statusCause = "rescaling"
	s.transitionTo(now, newRestarting(s, 0, true, r.target))
}

const reasonWarmupTimeout = "state.warmup.timeout passed"

// rewarm re-plans a round after the resources changed: the same copies go on; another
// plan replaces the round; a planned rescale that is no longer wanted is dropped.
func (e *executing) rewarm(now time.Time) {
	s := e.s
	r := e.warm
	if len(r.evacuate) == 0 {
		target, ok, changed := e.candidate()
		if !ok || !changed {
			s.log.Info("warm-up dropped: the rescale is no longer needed", "round", r.id)
			e.stopWarmup("rescale no longer needed")
			e.stm.reset()
			return
		}
		if !e.startWarmup(now, target, r.trigger, r.cause, nil) {
			e.switchNow(now, "nothing left to warm up")
		}
		return
	}
	if !e.startWarmup(now, nil, r.trigger, r.cause, r.evacuate) {
		e.switchNow(now, "nothing left to warm up")
	}
}

// stopWarmup abandons the round without switching.
func (e *executing) stopWarmup(reason string) {
	if e.warm == nil {
		return
	}
	e.s.emit(StopWarmup{Round: e.warm.id, Reason: reason})
	delete(e.s.timers.pending, e.warmTimer)
	e.warm = nil
}

// leave abandons a round the state did not finish (a failure, a cancel).
func (e *executing) leave(time.Time) { e.stopWarmup("job left RUNNING") }

// warmupCheckpoint sends a newer completed checkpoint to the round's copies.
func (e *executing) warmupCheckpoint(now time.Time) {
	r := e.warm
	e.s.emit(WarmUp{Round: r.id, Kind: WarmupPlanned, Checkpoint: e.s.latestCheckpoint, Tasks: r.tasks()})
	e.maybeSwitch(now)
}

// warmupPending describes the round for PendingRescale.
func (e *executing) warmupPending() PendingRescale {
	r := e.warm
	sum := r.summary(e.warmStart, e.s.latestCheckpoint)
	return PendingRescale{Reason: PendingWarmup, Until: e.warmUntil, Target: toVertexParallelism(r.target),
		Message: fmt.Sprintf("warming up %d key-group range(s) on their new TaskManagers (%d caught up, %d failed, %d queued behind max.warmup.replicas) until checkpoint %d or %s",
			sum.Planned, sum.Ready, sum.Failed, sum.Skipped, e.s.latestCheckpoint, e.warmUntil.UTC().Format(time.RFC3339Nano))}
}
