package core

import (
	"cmp"
	"fmt"
	"maps"
	"slices"
	"strings"
	"time"

	"github.com/tidestream/tide/core/allocator"
	"github.com/tidestream/tide/core/keygroups"
)

// Task adoption after an AM failover (issue 13). The TaskManagers of a job keep running
// its subtasks while the AM is away; a new AM that recovered the job waits a bounded time
// (Options.AdoptTimeout) for them to register and report what they run. When the reports
// form the deployment the recovered AM state says was running, the scheduler takes that
// deployment over as its current attempt (Deploy with Adopted set: nothing is redeployed)
// and goes to Executing. Otherwise it falls back to the restore from the latest checkpoint
// and says why; the reported subtasks are cancelled (CancelReported) before anything else
// is deployed on their slots, and so are those of a TaskManager that reports after that.
//
//	Created ──start──► WaitingForResources (adopting: reports collected, adopt timer)
//	                     │ every subtask reported once, attempts agree   │ timeout, conflict
//	                     ▼                                               ▼
//	                   Executing (adopted attempt)          fallback: CancelReported, normal wait

// RecoveredDeployment is the deployment a previous AM of the job persisted as running: the
// AM run that deployed it, its attempt and every vertex's parallelism.
type RecoveredDeployment struct {
	Job         string
	Run         string
	Attempt     AttemptID
	Parallelism map[VertexID]int
	// Placement is the TaskManager each subtask index of every slot-sharing group ran on
	// (Scheduler.Placement; nil: unknown). When the deployment is not adopted, the first
	// deployment prefers it, so that subtasks restore from the state their TaskManagers
	// kept locally rather than download it.
	Placement map[string][]string
}

// ReportedTask is one subtask a registering TaskManager still runs from an earlier AM.
type ReportedTask struct {
	Job     string
	Run     string
	Attempt AttemptID
	Subtask SubtaskID
	Slot    int
	State   TaskState
	// KeyGroups is the key-group range the subtask owns (both 0 with HasKeyGroups false:
	// the TaskManager was not told, Flink's equal split applies).
	KeyGroups    keygroups.Range
	HasKeyGroups bool
}

// CancelReported tells a TaskManager to cancel the subtasks it reported on registration
// (the attempt Attempt of AM run Run): they are not adopted.
type CancelReported struct {
	TaskManager TaskManagerID
	Run         string
	Attempt     AttemptID
	Reason      string
}

func (CancelReported) isEffect() {}

// adoption is the scheduler's side of a pending or decided adoption.
type adoption struct {
	want RecoveredDeployment
	// open: reports are being collected (from Start until adopted or fallen back).
	open bool
	// adopted: the recovered attempt was taken over.
	adopted bool
	// reports by subtask, and which TaskManager reported which subtasks; every report
	// (accepted or not) by TaskManager, to cancel on a fallback.
	reports map[SubtaskID]reported
	byTM    map[TaskManagerID][]SubtaskID
	all     map[TaskManagerID][]ReportedTask
	// conflict is the first reason the reports cannot be adopted ("" none).
	conflict string
	total    int    // subtasks of the recovered deployment
	fallback string // why it fell back ("" while pending or adopted)
}

type reported struct {
	tm   TaskManagerID
	task ReportedTask
}

// AdoptionStatus says how a recovered deployment fared, for logs and REST.
type AdoptionStatus struct {
	Pending, Adopted bool
	Reported, Total  int
	Attempt          AttemptID
	// Fallback says why the recovered deployment was not adopted ("" otherwise).
	Fallback string
	// Skipped says why a recovered deployment was not even waited for (adoption off, or
	// what the previous AM persisted does not fit the job); all else is zero then.
	Skipped string
}

// Adoption reports the state of task adoption (zero without a recovered deployment).
func (s *Scheduler) Adoption() AdoptionStatus {
	a := s.adopt
	if a == nil {
		return AdoptionStatus{Skipped: s.adoptSkipped}
	}
	return AdoptionStatus{Pending: a.open, Adopted: a.adopted, Reported: len(a.reports), Total: a.total,
		Attempt: a.want.Attempt, Fallback: a.fallback}
}

// newAdoption validates what the previous AM persisted against the job graph; nil means
// there is nothing to adopt (and why, for the log).
func (s *Scheduler) newAdoption(r *RecoveredDeployment) (*adoption, string) {
	if r == nil || r.Attempt <= 0 {
		return nil, "no deployment recorded by the previous AM"
	}
	if s.opts.AdoptTimeout <= 0 {
		return nil, "task adoption disabled (timeout 0)"
	}
	a := &adoption{want: *r, open: true, reports: map[SubtaskID]reported{}, byTM: map[TaskManagerID][]SubtaskID{},
		all: map[TaskManagerID][]ReportedTask{}}
	a.want.Parallelism = maps.Clone(r.Parallelism)
	for _, v := range s.vertices {
		p := r.Parallelism[v.id]
		if p < 1 || p > v.maxP {
			return nil, fmt.Sprintf("recorded parallelism %d of vertex %s is outside 1..%d", p, v.id, v.maxP)
		}
		a.total += p
	}
	if len(r.Parallelism) != len(s.vertices) {
		return nil, fmt.Sprintf("recorded deployment names %d vertices, the job has %d", len(r.Parallelism), len(s.vertices))
	}
	return a, ""
}

// adoptionOpen reports whether reports are still being collected.
func (s *Scheduler) adoptionOpen() bool { return s.adopt != nil && s.adopt.open }

// onReportedTasks takes the tasks a TaskManager reported with its registration (after its
// slots were added to the pool). Outside a pending adoption they are cancelled at once.
func (s *Scheduler) onReportedTasks(tm TaskManagerID, tasks []ReportedTask) {
	if len(tasks) == 0 {
		return
	}
	if !s.adoptionOpen() {
		reason := "no adoption pending"
		if s.adopt != nil && s.adopt.adopted {
			reason = "the recovered deployment was adopted without them"
		} else if s.adopt != nil {
			reason = "task adoption fell back to the restore from the latest checkpoint"
		}
		s.cancelReported(tm, tasks, reason)
		return
	}
	a := s.adopt
	a.all[tm] = append(a.all[tm], tasks...)
	for _, t := range tasks {
		if c := a.check(tm, t); c != "" {
			if a.conflict == "" {
				a.conflict = c
			}
			continue
		}
		a.reports[t.Subtask] = reported{tm: tm, task: t}
		a.byTM[tm] = append(a.byTM[tm], t.Subtask)
	}
	s.log.Info("task manager reported running subtasks", "task_manager", tm, "subtasks", len(tasks),
		"reported", len(a.reports), "total", a.total)
}

// check returns why one report cannot be part of the recovered deployment ("" if it can).
func (a *adoption) check(tm TaskManagerID, t ReportedTask) string {
	w := a.want
	switch {
	case t.Job != w.Job:
		return fmt.Sprintf("task manager %s reports subtask %s of job %s, the recovered job is %s", tm, t.Subtask, t.Job, w.Job)
	case t.Run != w.Run || t.Attempt != w.Attempt:
		return fmt.Sprintf("task manager %s reports subtask %s of attempt %d (AM run %s), the recovered deployment is attempt %d (AM run %s)",
			tm, t.Subtask, t.Attempt, t.Run, w.Attempt, w.Run)
	case t.Subtask.Index < 0 || t.Subtask.Index >= w.Parallelism[t.Subtask.Vertex]:
		return fmt.Sprintf("task manager %s reports subtask %s, outside the recovered parallelism %d of vertex %s",
			tm, t.Subtask, w.Parallelism[t.Subtask.Vertex], t.Subtask.Vertex)
	case t.State == TaskFailed || t.State == TaskCanceled:
		return fmt.Sprintf("task manager %s reports subtask %s %s", tm, t.Subtask, t.State)
	}
	if prev, dup := a.reports[t.Subtask]; dup {
		return fmt.Sprintf("subtask %s reported twice (task managers %s and %s)", t.Subtask, prev.tm, tm)
	}
	return ""
}

// cancelReported emits CancelReported for each distinct attempt among tasks.
func (s *Scheduler) cancelReported(tm TaskManagerID, tasks []ReportedTask, reason string) {
	type key struct {
		run     string
		attempt AttemptID
	}
	seen := map[key]bool{}
	for _, t := range tasks {
		k := key{t.Run, t.Attempt}
		if seen[k] {
			continue
		}
		seen[k] = true
		s.log.Info("cancelling reported subtasks", "task_manager", tm, "attempt", t.Attempt, "run", t.Run, "reason", reason)
		s.emit(CancelReported{TaskManager: tm, Run: t.Run, Attempt: t.Attempt, Reason: reason})
	}
}

// adoptionLost: a TaskManager that reported subtasks went away before the decision. Its
// reports are withdrawn, not held against the adoption: a TaskManager whose connection
// to the new AM broke keeps its subtasks running and reports them again when it
// reconnects. One that does not come back is missing when the adoption times out, and
// if its process died, its peers report their subtasks failed.
func (s *Scheduler) adoptionLost(tm TaskManagerID, reason string) {
	a := s.adopt
	if !s.adoptionOpen() || len(a.all[tm]) == 0 {
		return
	}
	for _, st := range a.byTM[tm] {
		delete(a.reports, st)
	}
	delete(a.byTM, tm)
	delete(a.all, tm)
	s.log.Info("task manager lost before the adoption was decided: its reports are withdrawn until it reports again",
		"task_manager", tm, "reason", reason, "reported", len(a.reports), "total", a.total)
}

// adoptionDecision reports whether the adoption can be decided now: ok with a plan when
// every subtask is reported, or a reason to fall back ("" while still waiting).
func (s *Scheduler) adoptionDecision() (plan allocator.Plan, ok bool, fallback string) {
	a := s.adopt
	if a.conflict != "" {
		return plan, false, a.conflict
	}
	if len(a.reports) < a.total {
		return plan, false, ""
	}
	plan.Parallelism = allocator.Parallelism{}
	for v, p := range a.want.Parallelism {
		plan.Parallelism[string(v)] = p
	}
	slotOf := map[allocator.GroupIndex]allocator.SlotRef{}
	for _, v := range s.vertices {
		for i := range a.want.Parallelism[v.id] {
			r := a.reports[SubtaskID{Vertex: v.id, Index: i}]
			gi := allocator.GroupIndex{Group: v.group, Index: i}
			ref := allocator.SlotRef{TaskManager: string(r.tm), Index: r.task.Slot}
			if prev, ok := slotOf[gi]; ok && prev != ref {
				return plan, false, fmt.Sprintf("subtask %s runs in slot %s/%d, apart from subtask %d of its slot-sharing group %q (slot %s/%d)",
					SubtaskID{Vertex: v.id, Index: i}, ref.TaskManager, ref.Index, i, v.group, prev.TaskManager, prev.Index)
			}
			slotOf[gi] = ref
		}
	}
	for gi, ref := range slotOf {
		plan.Assignments = append(plan.Assignments, allocator.Assignment{Slot: ref, GroupIndex: gi})
	}
	slices.SortFunc(plan.Assignments, func(x, y allocator.Assignment) int {
		return cmp.Or(cmp.Compare(x.Slot.TaskManager, y.Slot.TaskManager), cmp.Compare(x.Slot.Index, y.Slot.Index))
	})
	return plan, true, ""
}

// adoptedKeyGroups are the reported key-group ranges of vertex v (nil: none reported or
// they do not form a valid assignment, and the caller places them).
func (a *adoption) adoptedKeyGroups(v VertexID, p, maxP int) keygroups.Assignment {
	out := make(keygroups.Assignment, p)
	for i := range p {
		r := a.reports[SubtaskID{Vertex: v, Index: i}]
		if !r.task.HasKeyGroups {
			return nil
		}
		out[i] = r.task.KeyGroups
	}
	if out.Validate(maxP, p) != nil {
		return nil
	}
	return out
}

// tryAdopt decides a pending adoption when it can: it adopts the reported deployment, or
// falls back. It reports whether the adoption is decided.
func (s *Scheduler) tryAdopt(now time.Time) bool {
	plan, ok, reason := s.adoptionDecision()
	switch {
	case reason != "":
		s.adoptionFallback(now, reason)
		return true
	case !ok:
		return false
	}
	a := s.adopt
	s.attempt = a.want.Attempt - 1 // deploy numbers the attempt one above
	if err := s.deploy(plan); err != nil {
		s.attempt = a.want.Attempt // the restore is the attempt after the recovered one
		s.adoptionFallback(now, "the reported slots cannot be reserved: "+err.Error())
		return true
	}
	a.open, a.adopted = false, true
	s.log.Info("recovered deployment adopted: the subtasks keep running", "attempt", a.want.Attempt, "run", a.want.Run,
		"subtasks", a.total, "task_managers", len(a.byTM))
	s.statusCause = fmt.Sprintf("attempt %d adopted after an AM failover", a.want.Attempt)
	s.transitionTo(now, newExecuting(s))
	return true
}

// adoptionFallback abandons a pending adoption: the reported subtasks are cancelled and the
// job restores from the latest checkpoint like any new attempt.
func (s *Scheduler) adoptionFallback(now time.Time, reason string) {
	a := s.adopt
	a.open, a.fallback = false, reason
	s.log.Warn("task adoption abandoned: restoring from the latest checkpoint", "reason", reason,
		"reported", len(a.reports), "total", a.total, "restore_from", s.latestCheckpoint)
	s.addException(ExceptionEntry{Time: now, Attempt: a.want.Attempt,
		Error: "AM failover: task adoption abandoned, restoring from the latest checkpoint: " + reason})
	for _, tm := range slices.Sorted(maps.Keys(a.all)) {
		s.cancelReported(tm, a.all[tm], "task adoption abandoned: "+reason)
	}
	a.reports, a.byTM, a.all = nil, nil, nil
}

// missingReports names up to max subtasks nobody reported, for the timeout's reason.
func (a *adoption) missingReports(order []VertexID, most int) string {
	var out []string
	n := 0
	for _, v := range order {
		for i := range a.want.Parallelism[v] {
			if _, ok := a.reports[SubtaskID{Vertex: v, Index: i}]; !ok {
				n++
				if len(out) < most {
					out = append(out, SubtaskID{Vertex: v, Index: i}.String())
				}
			}
		}
	}
	if n > len(out) {
		out = append(out, fmt.Sprintf("and %d more", n-len(out)))
	}
	return strings.Join(out, ", ")
}
