package core

import (
	"errors"
	"fmt"
	"slices"
	"time"
)

// StateName names a scheduler state (Flink's AdaptiveScheduler state classes).
type StateName string

const (
	StateCreated             StateName = "Created"
	StateWaitingForResources StateName = "WaitingForResources"
	StateExecuting           StateName = "Executing"
	StateRestarting          StateName = "Restarting"
	StateCanceling           StateName = "Canceling"
	StateFailing             StateName = "Failing"
	StateFinished            StateName = "Finished"
)

// ErrInvalidTransition is returned (and logged) for a transition the table does not allow.
var ErrInvalidTransition = errors.New("invalid state transition")

// transitions is the table of legal transitions; anything else is a bug.
var transitions = map[StateName][]StateName{
	StateCreated:             {StateWaitingForResources, StateFinished},
	StateWaitingForResources: {StateExecuting, StateFinished},
	StateExecuting:           {StateRestarting, StateCanceling, StateFailing, StateFinished},
	StateRestarting:          {StateWaitingForResources, StateExecuting, StateCanceling, StateFinished},
	StateCanceling:           {StateFinished},
	StateFailing:             {StateCanceling, StateFinished},
	StateFinished:            nil,
}

// state is one scheduler state. The scheduler handles what every state shares (slot pool,
// blocklist, timers) and calls these hooks; embedding baseState ignores what a state
// does not listen to.
type state interface {
	name() StateName
	status() JobStatus
	// enter runs once the state is current; it emits effects and arms timers but never
	// transitions. settle runs right after and may transition (for example Canceling with
	// nothing left to cancel).
	enter(now time.Time)
	settle(now time.Time)
	leave(now time.Time)

	onStart(now time.Time)
	onCancel(now time.Time)
	onSuspend(now time.Time, reason string)
	onGlobalFailure(now time.Time, cause string, unrecoverable bool)
	// onResourcesChanged: slots came or went, requirements or options changed.
	onResourcesChanged(now time.Time, trigger RescaleTrigger)
	// onTaskFailed: a subtask of the current attempt failed (or its TaskManager was lost).
	onTaskFailed(now time.Time, cause string, unrecoverable bool, trigger RescaleTrigger)
	// onTasksChanged: task states of the current attempt changed (for example all terminal).
	onTasksChanged(now time.Time)
	onCheckpoint(now time.Time, completed bool)
	onTimer(now time.Time, t timerEntry)
}

type baseState struct{ s *Scheduler }

func (baseState) settle(time.Time)                                     {}
func (baseState) leave(time.Time)                                      {}
func (b baseState) onStart(time.Time)                                  { b.s.log.Warn("start ignored: job already started") }
func (baseState) onResourcesChanged(time.Time, RescaleTrigger)         {}
func (baseState) onTaskFailed(time.Time, string, bool, RescaleTrigger) {}
func (baseState) onTasksChanged(time.Time)                             {}
func (baseState) onCheckpoint(time.Time, bool)                         {}
func (baseState) onTimer(time.Time, timerEntry)                        {}

// transitionTo makes next the current state: leave, bump the state version (every timer
// armed so far becomes stale), enter, report the job status, then settle. Same-state and
// re-entrant transitions and any edge missing from the table panic: they are bugs.
func (s *Scheduler) transitionTo(now time.Time, next state) {
	from, to := s.state.name(), next.name()
	if s.transitioning {
		panic(fmt.Errorf("%w: %s -> %s requested while already transitioning", ErrInvalidTransition, from, to))
	}
	if !slices.Contains(transitions[from], to) {
		panic(fmt.Errorf("%w: %s -> %s", ErrInvalidTransition, from, to))
	}
	s.transitioning = true
	prev := s.state
	prev.leave(now)
	s.state = next
	s.version++
	s.timers.clear()
	s.enteredAt = now
	s.log.Info("state transition", "from", from, "to", to, "version", s.version)
	if s.onTransition != nil {
		s.onTransition(from, to)
	}
	s.history.entered(now, to)
	if prev.status() != next.status() {
		s.emit(JobStatusChanged{From: prev.status(), To: next.status(), Cause: s.statusCause})
	}
	s.statusCause = ""
	next.enter(now)
	s.transitioning = false
	if to != StateFinished {
		s.armGlobalTimers(now)
	}
	next.settle(now)
}
