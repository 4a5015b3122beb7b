package coretest

import (
	"cmp"
	"context"
	"fmt"
	"log/slog"
	"slices"
	"time"

	"github.com/tidestream/tide/core"
)

// Epoch is the logical time every Env starts at.
var Epoch = time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)

// Timer is a timer the scheduler armed and the Env has not fired yet.
type Timer struct {
	ID      core.TimerID
	Kind    string
	At      time.Time
	Version uint64
}

// Env plays the AM around one scheduler: it applies effects to its model of the cluster
// (timers, deployed subtasks, registered TaskManagers) and fires timers as time advances.
type Env struct {
	S   *core.Scheduler
	Now time.Time

	Timers   map[core.TimerID]Timer
	Subtasks map[core.AttemptID]map[core.SubtaskID]Subtask // subtasks still running, per attempt
	TMs      map[core.TaskManagerID]core.NodeID            // TaskManagers connected to the AM
	Deploys  []core.Deploy

	// Transitions collects "from -> to" lines from the scheduler's log; LastTransitions
	// are those of the latest Step.
	Transitions     []string
	LastTransitions []string
	// Observe, when set, sees every step (the simulation checks invariants there).
	Observe func(ev core.Event, effects []core.Effect)
}

// Subtask is a deployed subtask the Env tracks.
type Subtask struct {
	Slot  core.SlotID
	State core.TaskState
}

// NewEnv builds a scheduler from cfg (its Logger is replaced by one that records
// transitions) and an Env around it.
func NewEnv(cfg core.Config) (*Env, error) {
	e := &Env{Now: Epoch, Timers: map[core.TimerID]Timer{}, Subtasks: map[core.AttemptID]map[core.SubtaskID]Subtask{},
		TMs: map[core.TaskManagerID]core.NodeID{}}
	cfg.Logger = slog.New(&transitionRecorder{env: e})
	s, err := core.New(cfg)
	if err != nil {
		return nil, err
	}
	e.S = s
	return e, nil
}

// Step applies one event at e.Now and the returned effects to the model.
func (e *Env) Step(ev core.Event) []core.Effect {
	before := len(e.Transitions)
	effects := e.S.Step(e.Now, ev)
	e.LastTransitions = e.Transitions[before:]
	e.apply(ev, effects)
	return effects
}

func (e *Env) apply(ev core.Event, effects []core.Effect) {
	switch ev := ev.(type) {
	case core.TaskManagerRegistered:
		e.TMs[ev.TaskManager] = ev.Node
	case core.TaskManagerLost:
		e.dropTM(ev.TaskManager)
	case core.TaskStateChanged:
		if m := e.Subtasks[ev.Attempt]; m != nil {
			if st, ok := m[ev.Subtask]; ok {
				if ev.State.IsTerminal() {
					delete(m, ev.Subtask)
				} else {
					st.State = ev.State
					m[ev.Subtask] = st
				}
			}
		}
	}
	for _, eff := range effects {
		switch eff := eff.(type) {
		case core.StartTimer:
			e.Timers[eff.Timer] = Timer{ID: eff.Timer, Kind: eff.Kind, At: e.Now.Add(eff.After), Version: eff.Version}
		case core.Deploy:
			e.Deploys = append(e.Deploys, eff)
			m := map[core.SubtaskID]Subtask{}
			state := core.TaskDeploying
			if eff.Adopted {
				state = core.TaskRunning // already running on the TaskManagers
			}
			for _, sa := range eff.Slots {
				for _, st := range sa.Subtasks {
					m[st] = Subtask{Slot: sa.Slot, State: state}
				}
			}
			e.Subtasks[eff.Attempt] = m
		case core.ReleaseTaskManager:
			e.dropTM(eff.TaskManager)
		case core.RejectTaskManager:
			delete(e.TMs, eff.TaskManager)
		}
	}
	if e.Observe != nil {
		e.Observe(ev, effects)
	}
}

// dropTM forgets a TaskManager and the subtasks on it (a dead process reports nothing).
func (e *Env) dropTM(tm core.TaskManagerID) {
	delete(e.TMs, tm)
	for _, m := range e.Subtasks {
		for st, sub := range m {
			if sub.Slot.TaskManager == tm {
				delete(m, st)
			}
		}
	}
}

// Advance moves time forward by d, firing every due timer in time order (then by id).
// It returns each fired timer with the effects it produced.
func (e *Env) Advance(d time.Duration) []Fired {
	until := e.Now.Add(d)
	var fired []Fired
	for n := 0; ; n++ {
		if n == maxFiringsPerAdvance {
			panic(fmt.Sprintf("coretest: more than %d timers fired within one Advance(%v): the scheduler arms timers in a loop", n, d))
		}
		next, ok := e.nextTimer(until)
		if !ok {
			break
		}
		delete(e.Timers, next.ID)
		e.Now = next.At
		before := e.S.Metrics().StaleEventsDropped
		effects := e.Step(core.TimerFired{Timer: next.ID, Version: next.Version})
		fired = append(fired, Fired{Timer: next, Effects: effects, Transitions: e.LastTransitions,
			Stale: e.S.Metrics().StaleEventsDropped > before})
	}
	e.Now = until
	return fired
}

const maxFiringsPerAdvance = 100000

// Fired is one timer fired by Advance.
type Fired struct {
	Timer   Timer
	Effects []core.Effect
	Stale   bool // the scheduler dropped it as stale
	// Transitions are the state transitions it caused.
	Transitions []string
}

func (e *Env) nextTimer(until time.Time) (Timer, bool) {
	var best Timer
	found := false
	for _, t := range e.Timers {
		if t.At.After(until) {
			continue
		}
		if !found || t.At.Before(best.At) || (t.At.Equal(best.At) && t.ID < best.ID) {
			best, found = t, true
		}
	}
	return best, found
}

// Running lists the subtasks of attempt that have not stopped, sorted.
func (e *Env) Running(attempt core.AttemptID) []core.SubtaskID {
	m := e.Subtasks[attempt]
	out := make([]core.SubtaskID, 0, len(m))
	for st := range m {
		out = append(out, st)
	}
	slices.SortFunc(out, func(a, b core.SubtaskID) int {
		if c := cmp.Compare(a.Vertex, b.Vertex); c != 0 {
			return c
		}
		return cmp.Compare(a.Index, b.Index)
	})
	return out
}

// Attempts lists the attempts that still have subtasks, sorted.
func (e *Env) Attempts() []core.AttemptID {
	var out []core.AttemptID
	for a, m := range e.Subtasks {
		if len(m) > 0 {
			out = append(out, a)
		}
	}
	slices.Sort(out)
	return out
}

// Report sends state for every running subtask of attempt, one event each, and returns
// the effects of all of them.
func (e *Env) Report(attempt core.AttemptID, state core.TaskState) []core.Effect {
	var out []core.Effect
	for _, st := range e.Running(attempt) {
		out = append(out, e.Step(core.TaskStateChanged{Attempt: attempt, Subtask: st, State: state})...)
	}
	return out
}

// transitionRecorder is a slog handler that keeps only the scheduler's transitions.
type transitionRecorder struct{ env *Env }

func (r *transitionRecorder) Enabled(context.Context, slog.Level) bool { return true }

func (r *transitionRecorder) Handle(_ context.Context, rec slog.Record) error {
	if rec.Message != "state transition" {
		return nil
	}
	var from, to string
	rec.Attrs(func(a slog.Attr) bool {
		switch a.Key {
		case "from":
			from = a.Value.String()
		case "to":
			to = a.Value.String()
		}
		return true
	})
	r.env.Transitions = append(r.env.Transitions, from+" -> "+to)
	return nil
}

func (r *transitionRecorder) WithAttrs([]slog.Attr) slog.Handler { return r }
func (r *transitionRecorder) WithGroup(string) slog.Handler      { return r }
