package core

import (
	"errors"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/tidestream/tide/core/jobgraph"
	"github.com/tidestream/tide/core/restart"
)

var t0 = time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)

// harness wraps a scheduler and records every transition; checks fail on any transition
// the test did not expect.
type harness struct {
	t     *testing.T
	s     *Scheduler
	now   time.Time
	trans []string
	last  []Effect
}

func testOptions() Options {
	o := DefaultOptions()
	o.SubmissionStabilization = 0
	o.HeartbeatTimeout = 0
	o.SlotIdleTimeout = 0
	o.Restart = restart.Config{Type: restart.TypeFixedDelay, Attempts: 5, Delay: 10 * time.Second}
	return o
}

func newHarness(t *testing.T, o Options) *harness {
	t.Helper()
	g := jobgraph.JobGraph{Name: "j", Type: jobgraph.Streaming, Vertices: []jobgraph.Vertex{{ID: "map", Parallelism: 2}}}
	s, err := New(Config{Graph: g, Options: o, Seed: 1})
	if err != nil {
		t.Fatal(err)
	}
	h := &harness{t: t, s: s, now: t0}
	s.onTransition = func(from, to StateName) { h.trans = append(h.trans, string(from)+">"+string(to)) }
	return h
}

func (h *harness) step(ev Event) { h.last = h.s.Step(h.now, ev) }

// expect checks the transitions since the last expect (none: nothing may have moved).
func (h *harness) expect(want ...string) {
	h.t.Helper()
	if !slices.Equal(h.trans, want) && !(len(h.trans) == 0 && len(want) == 0) {
		h.t.Fatalf("transitions %v, want %v", h.trans, want)
	}
	h.trans = nil
}

func (h *harness) reportAll(state TaskState) {
	d := h.s.dep
	var sts []SubtaskID
	for _, sa := range d.slots {
		for _, st := range sa.Subtasks {
			if pos, _ := d.task(st); !d.tasks[pos].IsTerminal() {
				sts = append(sts, st)
			}
		}
	}
	for _, st := range sts {
		h.step(TaskStateChanged{Attempt: d.attempt, Subtask: st, State: state})
	}
}

func (h *harness) timer(kind timerKind) TimerFired {
	h.t.Helper()
	for _, e := range h.s.timers.pending {
		if e.kind == kind {
			return TimerFired{Timer: e.id, Version: e.version}
		}
	}
	h.t.Fatalf("no pending %s timer", kind)
	return TimerFired{}
}

// to drives a fresh harness into the named state.
func to(t *testing.T, o Options, name StateName) *harness {
	t.Helper()
	h := newHarness(t, o)
	switch name {
	case StateCreated:
	case StateWaitingForResources:
		h.step(Start{})
	case StateExecuting, StateRestarting, StateCanceling, StateFailing:
		h.step(TaskManagerRegistered{TaskManager: "tm1", Node: "n1", Slots: 2})
		h.step(Start{})
		h.reportAll(TaskRunning)
		switch name {
		case StateRestarting:
			h.step(TaskStateChanged{Attempt: 1, Subtask: SubtaskID{"map", 0}, State: TaskFailed, Error: "boom"})
		case StateCanceling:
			h.step(CancelJob{})
		case StateFailing:
			h.step(TaskStateChanged{Attempt: 1, Subtask: SubtaskID{"map", 0}, State: TaskFailed, Error: "boom", Unrecoverable: true})
		}
	case StateFinished:
		h.step(CancelJob{})
	}
	if got := h.s.StateName(); got != name {
		t.Fatalf("setup reached %s, want %s", got, name)
	}
	h.trans = nil
	return h
}

func TestStates(t *testing.T) {
	noRestart := testOptions()
	noRestart.Restart = restart.Config{Type: restart.TypeNone}
	for _, tc := range []struct {
		name   string
		state  StateName
		opts   *Options
		events func(h *harness)
		want   []string
		final  JobStatus
	}{
		{"created start", StateCreated, nil, func(h *harness) { h.step(Start{}) }, []string{"Created>WaitingForResources"}, StatusCreated},
		{"created cancel", StateCreated, nil, func(h *harness) { h.step(CancelJob{}) }, []string{"Created>Finished"}, StatusCanceled},
		{"created suspend", StateCreated, nil, func(h *harness) { h.step(SuspendJob{}) }, []string{"Created>Finished"}, StatusSuspended},
		{"created global failure", StateCreated, nil, func(h *harness) { h.step(GlobalFailure{Error: "x"}) }, []string{"Created>Finished"}, StatusFailed},
		{"created ignores slots", StateCreated, nil, func(h *harness) { h.step(TaskManagerRegistered{TaskManager: "tm1", Node: "n", Slots: 4}) }, nil, StatusInitializing},
		{"waiting desired", StateWaitingForResources, nil, func(h *harness) { h.step(TaskManagerRegistered{TaskManager: "tm1", Node: "n", Slots: 2}) }, []string{"WaitingForResources>Executing"}, StatusRunning},
		{"waiting second start ignored", StateWaitingForResources, nil, func(h *harness) { h.step(Start{}) }, nil, StatusCreated},
		{"waiting cancel", StateWaitingForResources, nil, func(h *harness) { h.step(CancelJob{}) }, []string{"WaitingForResources>Finished"}, StatusCanceled},
		{"waiting suspend", StateWaitingForResources, nil, func(h *harness) { h.step(SuspendJob{}) }, []string{"WaitingForResources>Finished"}, StatusSuspended},
		{"waiting global failure", StateWaitingForResources, nil, func(h *harness) { h.step(GlobalFailure{Error: "x"}) }, []string{"WaitingForResources>Finished"}, StatusFailed},
		{"waiting resource timeout", StateWaitingForResources, nil, func(h *harness) { h.step(h.timer(timerResourceWait)) }, []string{"WaitingForResources>Finished"}, StatusFailed},
		{"executing recoverable failure", StateExecuting, nil, func(h *harness) {
			h.step(TaskStateChanged{Attempt: 1, Subtask: SubtaskID{"map", 1}, State: TaskFailed})
		}, []string{"Executing>Restarting"}, StatusRestarting},
		{"executing unrecoverable failure", StateExecuting, nil, func(h *harness) {
			h.step(TaskStateChanged{Attempt: 1, Subtask: SubtaskID{"map", 1}, State: TaskFailed, Unrecoverable: true})
		}, []string{"Executing>Failing"}, StatusFailing},
		{"executing no restart allowed", StateExecuting, &noRestart, func(h *harness) { h.step(GlobalFailure{Error: "x"}) }, []string{"Executing>Failing"}, StatusFailing},
		{"executing cancel", StateExecuting, nil, func(h *harness) { h.step(CancelJob{}) }, []string{"Executing>Canceling"}, StatusCancelling},
		{"executing suspend", StateExecuting, nil, func(h *harness) { h.step(SuspendJob{}) }, []string{"Executing>Finished"}, StatusSuspended},
		{"executing lost tm", StateExecuting, nil, func(h *harness) { h.step(TaskManagerLost{TaskManager: "tm1"}) }, []string{"Executing>Restarting"}, StatusRestarting},
		{"executing all finished", StateExecuting, nil, func(h *harness) { h.reportAll(TaskFinished) }, []string{"Executing>Finished"}, StatusFinished},
		{"executing stale attempt", StateExecuting, nil, func(h *harness) {
			h.step(TaskStateChanged{Attempt: 9, Subtask: SubtaskID{"map", 0}, State: TaskFailed})
		}, nil, StatusRunning},
		{"executing slots in cooldown", StateExecuting, nil, func(h *harness) { h.step(TaskManagerRegistered{TaskManager: "tm2", Node: "n2", Slots: 2}) }, nil, StatusRunning},
		{"restarting waits for tasks", StateRestarting, nil, func(h *harness) { h.step(h.timer(timerRestartBackoff)) }, nil, StatusRestarting},
		{"restarting waits for backoff", StateRestarting, nil, func(h *harness) { h.reportAll(TaskCanceled) }, nil, StatusRestarting},
		{"restarting proceeds", StateRestarting, nil, func(h *harness) { h.reportAll(TaskCanceled); h.step(h.timer(timerRestartBackoff)) },
			[]string{"Restarting>WaitingForResources", "WaitingForResources>Executing"}, StatusRunning},
		{"restarting ignores failures", StateRestarting, nil, func(h *harness) { h.step(GlobalFailure{Error: "x"}) }, nil, StatusRestarting},
		{"restarting cancel", StateRestarting, nil, func(h *harness) { h.step(CancelJob{}) }, []string{"Restarting>Canceling"}, StatusCancelling},
		{"restarting suspend", StateRestarting, nil, func(h *harness) { h.step(SuspendJob{}) }, []string{"Restarting>Finished"}, StatusSuspended},
		{"canceling cancel again", StateCanceling, nil, func(h *harness) { h.step(CancelJob{}) }, nil, StatusCancelling},
		{"canceling ignores failures", StateCanceling, nil, func(h *harness) { h.step(GlobalFailure{Error: "x"}) }, nil, StatusCancelling},
		{"canceling done", StateCanceling, nil, func(h *harness) { h.reportAll(TaskCanceled) }, []string{"Canceling>Finished"}, StatusCanceled},
		{"canceling suspend", StateCanceling, nil, func(h *harness) { h.step(SuspendJob{}) }, []string{"Canceling>Finished"}, StatusSuspended},
		{"failing cancel", StateFailing, nil, func(h *harness) { h.step(CancelJob{}) }, []string{"Failing>Canceling"}, StatusCancelling},
		{"failing done", StateFailing, nil, func(h *harness) { h.reportAll(TaskCanceled) }, []string{"Failing>Finished"}, StatusFailed},
		{"failing ignores failures", StateFailing, nil, func(h *harness) { h.step(GlobalFailure{Error: "x"}) }, nil, StatusFailing},
		{"finished ignores everything", StateFinished, nil, func(h *harness) {
			h.step(Start{})
			h.step(CancelJob{})
			h.step(SuspendJob{})
			h.step(GlobalFailure{Error: "x"})
			h.step(TaskManagerRegistered{TaskManager: "tm9", Node: "n9", Slots: 1})
		}, nil, StatusCanceled},
	} {
		t.Run(tc.name, func(t *testing.T) {
			o := testOptions()
			if tc.opts != nil {
				o = *tc.opts
			}
			h := to(t, o, tc.state)
			tc.events(h)
			h.expect(tc.want...)
			if got := h.s.Status(); got != tc.final {
				t.Fatalf("status %s, want %s", got, tc.final)
			}
		})
	}
}

func TestSlotsVanishBeforeReservation(t *testing.T) {
	h := to(t, testOptions(), StateWaitingForResources)
	h.s.beforeReserve = func() { h.s.pool.Remove("tm1") }
	h.step(TaskManagerRegistered{TaskManager: "tm1", Node: "n1", Slots: 2})
	h.expect() // back in (still in) WaitingForResources, no loop
	if m := h.s.Metrics(); m.ReservationFailures != 1 {
		t.Fatalf("ReservationFailures = %d, want 1", m.ReservationFailures)
	}
	h.s.beforeReserve = nil
	h.step(TaskManagerRegistered{TaskManager: "tm2", Node: "n2", Slots: 2})
	h.expect("WaitingForResources>Executing")
}

func TestStaleTimerDropped(t *testing.T) {
	h := to(t, testOptions(), StateWaitingForResources)
	stale := h.timer(timerResourceWait)
	h.step(TaskManagerRegistered{TaskManager: "tm1", Node: "n1", Slots: 2})
	h.expect("WaitingForResources>Executing")
	before := h.s.Metrics().StaleEventsDropped
	h.step(stale)
	h.expect()
	if len(h.last) != 0 || h.s.Metrics().StaleEventsDropped != before+1 {
		t.Fatalf("stale timer produced %v, dropped %d", h.last, h.s.Metrics().StaleEventsDropped-before)
	}
}

func TestTransitionGuards(t *testing.T) {
	h := newHarness(t, testOptions())
	for _, next := range []state{&created{baseState{h.s}}, newExecuting(h.s)} {
		func() {
			defer func() {
				r := recover()
				err, ok := r.(error)
				if !ok || !errors.Is(err, ErrInvalidTransition) {
					t.Fatalf("transition Created -> %s: recovered %v, want ErrInvalidTransition", next.name(), r)
				}
			}()
			h.s.transitionTo(t0, next)
		}()
	}
}

func TestNewRefuses(t *testing.T) {
	batch := jobgraph.JobGraph{Name: "b", Type: jobgraph.Batch, Vertices: []jobgraph.Vertex{{ID: "v", Parallelism: 1}}}
	o := testOptions()
	o.Reactive = true
	if _, err := New(Config{Graph: batch, Options: o}); !errors.Is(err, ErrReactiveBatch) {
		t.Fatalf("New(batch, reactive) = %v, want ErrReactiveBatch", err)
	}
	bad := testOptions()
	bad.MinParallelismIncrease = 0
	bad.Cooldown = -time.Second
	_, err := New(Config{Graph: batch, Options: bad})
	if err == nil || !strings.Contains(err.Error(), "MinParallelismIncrease") || !strings.Contains(err.Error(), "Cooldown") {
		t.Fatalf("New(bad options) = %v, want both problems named", err)
	}
}

func TestUpdateRequirementsValidation(t *testing.T) {
	h := to(t, testOptions(), StateExecuting)
	for _, tc := range []struct {
		req  map[VertexID]Bounds
		want string
	}{
		{map[VertexID]Bounds{}, `missing job vertex "map"`},
		{map[VertexID]Bounds{"map": {1, 2}, "x": {1, 1}}, `unknown job vertex "x"`},
		{map[VertexID]Bounds{"map": {3, 2}}, `vertex "map": bounds [3,2]`},
		{map[VertexID]Bounds{"map": {1, 500}}, "maxParallelism 128"},
	} {
		if _, err := h.s.UpdateRequirements(h.now, tc.req); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("UpdateRequirements(%v) = %v, want error containing %q", tc.req, err, tc.want)
		}
	}
	if _, err := h.s.UpdateRequirements(h.now, map[VertexID]Bounds{"map": {-1, -1}}); err != nil {
		t.Fatal(err)
	}
	if got := h.s.Requirements()["map"]; got != (Bounds{1, 128}) {
		t.Fatalf("requirements %v, want [1,128] from defaults", got)
	}
	h.expect()
}

func TestReactiveDefaults(t *testing.T) {
	none := func(string) bool { return false }
	o := ReactiveDefaults(DefaultOptions(), none)
	if !o.Reactive || o.ResourceWaitTimeout >= 0 || o.SubmissionStabilization != ReactiveSubmissionStabilization || o.ExecutingStabilization != 0 {
		t.Fatalf("reactive defaults %+v", o)
	}
	set := func(k string) bool { return strings.HasSuffix(k, "resource-stabilization-timeout") }
	if o := ReactiveDefaults(DefaultOptions(), set); o.SubmissionStabilization != 10*time.Second || o.ExecutingStabilization != time.Minute {
		t.Fatalf("user-set stabilization overridden: submission %v, executing %v", o.SubmissionStabilization, o.ExecutingStabilization)
	}
}
