package core_test

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/tidestream/tide/core"
	"github.com/tidestream/tide/core/coretest"
	"github.com/tidestream/tide/core/jobgraph"
)

// TestAdoptionSimulation drives a new AM's scheduler after an AM failover with random
// registrations (fixed seeds): TaskManagers report the recovered deployment completely,
// partly, with a disagreeing attempt or job, twice, late after the decision, or are lost
// meanwhile, in random order with the adoption timeout passing at random points. After
// every step it checks:
//   - a deployment is adopted only when every subtask of the recovered deployment was
//     reported exactly once with the recovered job, AM run and attempt, and it keeps the
//     reported slots and the recovered attempt number;
//   - nothing is deployed on a TaskManager that reported subtasks before those subtasks
//     were adopted or cancelled (CancelReported earlier in the same or an earlier step);
//   - once the timeout passed, the adoption is decided; every reported subtask that was
//     not adopted is cancelled, including those of TaskManagers reporting after it;
//   - the same seed gives the same effects.
func TestAdoptionSimulation(t *testing.T) {
	adopted, fellBack, late := 0, 0, 0
	for seed := uint64(0); seed < 2000; seed++ {
		a, err := simulateAdoption(seed)
		if err != nil {
			t.Fatalf("seed %d: %v", seed, err)
		}
		b, _ := simulateAdoption(seed)
		if a.trace != b.trace {
			t.Fatalf("seed %d: two runs differ:\n%s\n---\n%s", seed, a.trace, b.trace)
		}
		if a.adopted {
			adopted++
		} else {
			fellBack++
		}
		late += a.late
	}
	t.Logf("adopted %d, fell back %d, late reporters cancelled %d", adopted, fellBack, late)
	if adopted == 0 || fellBack == 0 || late == 0 {
		t.Errorf("the generator misses a path: adopted %d, fell back %d, late %d", adopted, fellBack, late)
	}
}

type adoptionRun struct {
	trace   string
	adopted bool
	late    int // reports after the decision, cancelled
}

type simTM struct {
	id    core.TaskManagerID
	slots int
	tasks []core.ReportedTask
	fault string // "", "missing", "attempt", "job", "dup", "failed"
}

func simulateAdoption(seed uint64) (adoptionRun, error) {
	r := rand.New(rand.NewPCG(seed, 13))
	var run adoptionRun
	// The job: 1-3 vertices in one or two slot-sharing groups.
	g := jobgraph.JobGraph{Name: "job", Type: jobgraph.Streaming}
	nv := 1 + r.IntN(3)
	want := map[core.VertexID]int{}
	for i := range nv {
		id := fmt.Sprintf("v%d", i)
		group := ""
		if i > 0 && r.IntN(3) == 0 {
			group = "g2"
		}
		p := 1 + r.IntN(4)
		g.Vertices = append(g.Vertices, jobgraph.Vertex{ID: id, Name: id, Parallelism: p, SlotSharingGroup: group, MaxParallelism: 16})
		want[core.VertexID(id)] = p
	}
	o := core.DefaultOptions()
	o.HeartbeatTimeout, o.SlotIdleTimeout = 0, 0
	o.SubmissionStabilization = time.Second
	o.AdoptTimeout = 10 * time.Second
	recovered := &core.RecoveredDeployment{Job: "job-1", Run: "run-a", Attempt: core.AttemptID(1 + r.IntN(5)), Parallelism: want}
	env, err := coretest.NewEnv(core.Config{Graph: g, Options: o, Seed: int64(seed), Recovered: recovered})
	if err != nil {
		return run, err
	}
	// The recovered deployment: execution group (group, i) in slot i%k of TaskManager i/k's.
	groups := map[string]int{}
	for _, v := range g.Vertices {
		groups[v.Group()] = max(groups[v.Group()], v.Parallelism)
	}
	ntm := 1 + r.IntN(3)
	tms := make([]*simTM, ntm)
	for i := range tms {
		tms[i] = &simTM{id: core.TaskManagerID(fmt.Sprintf("tm-%d", i))}
	}
	slotOf := map[string]core.SlotID{}
	for _, name := range slices.Sorted(func(yield func(string) bool) {
		for k := range groups {
			if !yield(k) {
				return
			}
		}
	}) {
		for i := range groups[name] {
			tm := tms[r.IntN(ntm)]
			slotOf[fmt.Sprintf("%s/%d", name, i)] = core.SlotID{TaskManager: tm.id, Index: tm.slots}
			tm.slots++
		}
	}
	for _, v := range g.Vertices {
		for i := range v.Parallelism {
			slot := slotOf[fmt.Sprintf("%s/%d", v.Group(), i)]
			for _, tm := range tms {
				if tm.id == slot.TaskManager {
					tm.tasks = append(tm.tasks, core.ReportedTask{Job: "job-1", Run: "run-a", Attempt: recovered.Attempt,
						Subtask: core.SubtaskID{Vertex: core.VertexID(v.ID), Index: i}, Slot: slot.Index, State: core.TaskRunning})
				}
			}
		}
	}
	var live []*simTM
	for _, tm := range tms {
		if tm.slots == 0 {
			tm.slots = 1
		}
		if r.IntN(4) == 0 {
			faults := []string{"missing", "attempt", "job", "dup", "failed"}
			tm.fault = faults[r.IntN(len(faults))]
		}
		switch tm.fault {
		case "missing":
			continue
		case "attempt":
			for i := range tm.tasks {
				tm.tasks[i].Attempt++
			}
		case "job":
			for i := range tm.tasks {
				tm.tasks[i].Job = "job-0"
			}
		case "dup":
			if len(tm.tasks) > 0 {
				tm.tasks = append(tm.tasks, tm.tasks[0])
			}
		case "failed":
			if len(tm.tasks) > 0 {
				tm.tasks[0].State = core.TaskFailed
			}
		}
		live = append(live, tm)
	}
	r.Shuffle(len(live), func(i, j int) { live[i], live[j] = live[j], live[i] })
	faulty := false
	for _, tm := range tms {
		faulty = faulty || (tm.fault != "" && len(tm.tasks) > 0)
	}

	var trace strings.Builder
	// reported: TaskManagers with reported subtasks neither adopted nor cancelled yet.
	reported := map[core.TaskManagerID]bool{}
	decided, adoptedSeen := false, false
	var timeoutAt = coretest.Epoch.Add(o.AdoptTimeout)
	check := func(ev core.Event, effs []core.Effect) error {
		for _, eff := range effs {
			fmt.Fprintln(&trace, coretest.FormatEffect(eff))
			switch e := eff.(type) {
			case core.CancelReported:
				delete(reported, e.TaskManager)
			case core.Deploy:
				if e.Adopted {
					if adoptedSeen || faulty {
						return fmt.Errorf("adopted a deployment with faults %v (twice: %v)", faultsOf(tms), adoptedSeen)
					}
					adoptedSeen = true
					if e.Attempt != recovered.Attempt {
						return fmt.Errorf("adopted as attempt %d, recovered %d", e.Attempt, recovered.Attempt)
					}
					for _, sa := range e.Slots {
						for _, st := range sa.Subtasks {
							v := g.Vertices[slices.IndexFunc(g.Vertices, func(x jobgraph.Vertex) bool { return x.ID == string(st.Vertex) })]
							if want := slotOf[fmt.Sprintf("%s/%d", v.Group(), st.Index)]; want != sa.Slot {
								return fmt.Errorf("adopted %s into %s, it runs in %s", st, sa.Slot, want)
							}
						}
						delete(reported, sa.Slot.TaskManager)
					}
					run.adopted = true
					continue
				}
				for _, sa := range e.Slots {
					if reported[sa.Slot.TaskManager] {
						return fmt.Errorf("attempt %d deployed on %s before its reported subtasks were cancelled", e.Attempt, sa.Slot)
					}
				}
			}
		}
		return nil
	}
	step := func(ev core.Event) error {
		if reg, ok := ev.(core.TaskManagerRegistered); ok && len(reg.Tasks) > 0 {
			reported[reg.TaskManager] = true
			if decided {
				run.late++
			}
		}
		if lost, ok := ev.(core.TaskManagerLost); ok {
			if reported[lost.TaskManager] && !decided {
				faulty = true // its subtasks died with it before the decision
			}
			delete(reported, lost.TaskManager)
		}
		effs := env.Step(ev)
		if err := check(ev, effs); err != nil {
			return err
		}
		decided = !env.S.Adoption().Pending
		return nil
	}
	if err := step(core.Start{}); err != nil {
		return run, err
	}
	for len(live) > 0 {
		switch x := r.IntN(10); {
		case x < 6:
			tm := live[0]
			live = live[1:]
			if err := step(core.TaskManagerRegistered{TaskManager: tm.id, Node: core.NodeID(tm.id), Slots: tm.slots, Tasks: tm.tasks}); err != nil {
				return run, err
			}
		case x < 7 && len(env.TMs) > 0:
			ids := slices.Sorted(func(yield func(core.TaskManagerID) bool) {
				for id := range env.TMs {
					if !yield(id) {
						return
					}
				}
			})
			if err := step(core.TaskManagerLost{TaskManager: ids[r.IntN(len(ids))], Reason: "killed"}); err != nil {
				return run, err
			}
		default:
			for _, f := range env.Advance(time.Duration(1+r.IntN(6)) * time.Second) {
				if err := check(core.TimerFired{}, f.Effects); err != nil {
					return run, err
				}
			}
			decided = !env.S.Adoption().Pending
		}
	}
	for _, f := range env.Advance(o.AdoptTimeout + time.Second) {
		if err := check(core.TimerFired{}, f.Effects); err != nil {
			return run, err
		}
	}
	if !env.Now.Before(timeoutAt) && env.S.Adoption().Pending {
		return run, fmt.Errorf("adoption still pending at +%v, past its timeout", env.Now.Sub(coretest.Epoch))
	}
	if len(reported) > 0 {
		return run, fmt.Errorf("reported subtasks of %v neither adopted nor cancelled", reported)
	}
	run.trace = trace.String()
	return run, nil
}

func faultsOf(tms []*simTM) []string {
	var out []string
	for _, tm := range tms {
		out = append(out, string(tm.id)+":"+tm.fault)
	}
	return out
}
