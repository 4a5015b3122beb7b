package core

import (
	"maps"

	"testing"
	"time"

	"github.com/tidestream/tide/core/blocklist"
	"github.com/tidestream/tide/core/jobgraph"
)

func TestRestoreKeepsBlocklistEndsAndHistories(t *testing.T) {
	o := testOptions()
	o.RescaleHistorySize = 2
	o.ExceptionHistorySize = 2
	o.BlocklistDefaultTimeout = time.Hour
	h := newHarness(t, o)
	timed := blocklist.BlockedNode{ID: "n-timed", Action: blocklist.MarkBlocked, Start: t0.Add(-10 * time.Minute), End: t0.Add(20 * time.Minute), Cause: "bad disk"}
	permanent := blocklist.BlockedNode{ID: "n-perm", Action: blocklist.MarkBlockedAndEvacuate, Start: t0.Add(-time.Hour), Cause: "retired"}
	expired := blocklist.BlockedNode{ID: "n-old", Action: blocklist.MarkBlocked, Start: t0.Add(-time.Hour), End: t0.Add(-time.Minute)}
	noStart := blocklist.BlockedNode{ID: "n-nostart", Action: blocklist.MarkBlocked, End: t0.Add(time.Hour)}
	rescales := []Rescale{{ID: 3, Trigger: TriggerInitialSchedule}, {ID: 4, Trigger: TriggerResourceLost}, {ID: 7, Trigger: TriggerNewResourceAvailable}}
	exceptions := []ExceptionEntry{{Error: "a"}, {Error: "b"}, {Error: "c", Time: t0.Add(-time.Second)}}

	skipped := h.s.Restore(h.now, Restored{Blocked: []blocklist.BlockedNode{timed, permanent, expired, noStart}, Rescales: rescales, Exceptions: exceptions})

	if len(skipped) != 2 || skipped[0].ID != "n-old" || skipped[1].ID != "n-nostart" {
		t.Fatalf("skipped %+v, want n-old and n-nostart", skipped)
	}
	got := h.s.Blocklist()
	if len(got) != 2 || !got[0].Equal(permanent) || !got[1].Equal(timed) {
		t.Fatalf("blocklist %+v, want the permanent and the timed node unchanged", got)
	}
	if r := h.s.RescaleHistory(); len(r) != 2 || r[0].ID != 4 || r[1].ID != 7 {
		t.Fatalf("rescales %+v, want ids 4 and 7", r)
	}
	if e, ok := h.s.LatestException(); !ok || e.Error != "c" || len(h.s.Exceptions()) != 2 {
		t.Fatalf("exceptions %+v, want b and c", h.s.Exceptions())
	}

	// New rescales continue above the restored ids; the timed block expires at its own end.
	h.s.history.begin(h.now, TriggerResourceLost, "tm lost", StateExecuting, nil, nil)
	if r, _ := h.s.history.finish(h.now, RescaleCompleted, 1, nil, o.RescaleHistorySize); r.ID != 8 {
		t.Fatalf("next rescale id %d, want 8", r.ID)
	}
	h.now = t0.Add(20 * time.Minute)
	h.s.expireBlockedNodes(h.now)
	if got := h.s.Blocklist(); len(got) != 1 || got[0].ID != "n-perm" {
		t.Fatalf("blocklist after the timed end %+v, want only the permanent node", got)
	}
}

// Without adoption, the first deployment after an AM failover keeps each subtask on the
// TaskManager the previous AM ran it on (its local state is there); with no persisted
// placement it falls back to the allocator's own order.
func TestRestoredPlacementKeepsSubtasksWhereTheyRan(t *testing.T) {
	for _, tc := range []struct {
		name      string
		placement map[string][]string
		want      map[int]TaskManagerID
	}{
		{"persisted placement", map[string][]string{jobgraph.DefaultSlotSharingGroup: {"tm2", "tm1"}}, map[int]TaskManagerID{0: "tm2", 1: "tm1"}},
		{"none persisted", nil, map[int]TaskManagerID{0: "tm1", 1: "tm2"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			o := testOptions()
			o.AdoptTimeout = 0 // adoption off: the job restores from its checkpoint
			h := newHarness(t, o)
			h.s.Restore(h.now, Restored{Deployment: &RecoveredDeployment{Job: "j", Run: "run-a", Attempt: 3,
				Parallelism: map[VertexID]int{"map": 2}, Placement: tc.placement}})
			h.step(TaskManagerRegistered{TaskManager: "tm1", Node: "n1", Slots: 1})
			h.step(TaskManagerRegistered{TaskManager: "tm2", Node: "n2", Slots: 1})
			h.step(Start{})
			var deploy *Deploy
			for _, e := range h.last {
				if d, ok := e.(Deploy); ok {
					deploy = &d
				}
			}
			if deploy == nil {
				t.Fatalf("no deployment: %v", h.last)
			}
			got := map[int]TaskManagerID{}
			for _, sa := range deploy.Slots {
				for _, st := range sa.Subtasks {
					got[st.Index] = sa.Slot.TaskManager
				}
			}
			if !maps.Equal(got, tc.want) {
				t.Fatalf("subtasks on %v, want %v", got, tc.want)
			}
			if p := h.s.Placement()[jobgraph.DefaultSlotSharingGroup]; len(p) != 2 || TaskManagerID(p[0]) != tc.want[0] || TaskManagerID(p[1]) != tc.want[1] {
				t.Fatalf("Placement() %v, want the deployment's %v", p, tc.want)
			}
		})
	}
}

// After an AM failover the next deployment is the attempt after the newest one the earlier
// AM ran: its recorded deployment's, or, when it died between deployments, the newest its
// histories name; with nothing restored it is attempt 1.
func TestRestoredAttemptsGoOn(t *testing.T) {
	for _, tc := range []struct {
		name string
		r    Restored
		want AttemptID
	}{
		{"nothing restored", Restored{}, 1},
		{"deployment", Restored{Deployment: &RecoveredDeployment{Job: "j", Run: "run-a", Attempt: 3,
			Parallelism: map[VertexID]int{"map": 2}}}, 4},
		{"histories only", Restored{Rescales: []Rescale{{ID: 1, Attempt: 2}, {ID: 2, Attempt: 5}},
			Exceptions: []ExceptionEntry{{Error: "lost", Attempt: 6}}}, 7},
		{"deployment older than the histories", Restored{Rescales: []Rescale{{ID: 1, Attempt: 4}},
			Deployment: &RecoveredDeployment{Job: "j", Run: "run-a", Attempt: 3, Parallelism: map[VertexID]int{"map": 2}}}, 5},
	} {
		t.Run(tc.name, func(t *testing.T) {
			o := testOptions()
			o.AdoptTimeout = 0 // adoption off: the job restores
			h := newHarness(t, o)
			h.s.Restore(h.now, tc.r)
			h.step(TaskManagerRegistered{TaskManager: "tm1", Node: "n1", Slots: 2})
			h.step(Start{})
			for _, e := range h.last {
				if d, ok := e.(Deploy); ok {
					if d.Attempt != tc.want {
						t.Fatalf("deployed attempt %d, want %d", d.Attempt, tc.want)
					}
					return
				}
			}
			t.Fatalf("no deployment: %v", h.last)
		})
	}
}
