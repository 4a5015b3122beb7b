package coretest

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/tidestream/tide/core"
	"github.com/tidestream/tide/core/keygroups"
)

// Directives of task adoption after an AM failover (core/adoption.go):
//
//	new-job ... adopt=10s recovered-run=r1 recovered-attempt=3 recovered-p=(map:2,sink:2) [recovered-job=j]
//	report-tm id=tm1 [slots=N] [node=n] [run=r1] [attempt=3] [job=j] [state=RUNNING] tasks=(map#0:0,sink#0:0:0-63)
//
// A report lists subtask:slot[:kgStart-kgEnd]; run, attempt and job default to the
// recovered ones.

// recoveredFrom reads the recovered deployment of new-job (nil without recovered-attempt).
func recoveredFrom(d *TestData) (*core.RecoveredDeployment, error) {
	a := d.Arg("recovered-attempt", "")
	if a == "" {
		return nil, nil
	}
	n, err := strconv.Atoi(a)
	if err != nil {
		return nil, fmt.Errorf("recovered-attempt %q: %w", a, err)
	}
	r := &core.RecoveredDeployment{Job: d.Arg("recovered-job", "job"), Run: d.Arg("recovered-run", "r1"),
		Attempt: core.AttemptID(n), Parallelism: map[core.VertexID]int{}}
	for _, vp := range d.Vals("recovered-p") {
		v, p, ok := strings.Cut(vp, ":")
		n, err := strconv.Atoi(p)
		if !ok || err != nil {
			return nil, fmt.Errorf("recovered-p %q: want vertex:parallelism", vp)
		}
		r.Parallelism[core.VertexID(v)] = n
	}
	return r, nil
}

// reportTM registers TaskManagers that report running subtasks.
func (r *Runner) reportTM(d *TestData) (core.TaskManagerRegistered, error) {
	slots, err := strconv.Atoi(d.Arg("slots", "1"))
	if err != nil {
		return core.TaskManagerRegistered{}, fmt.Errorf("slots: %w", err)
	}
	attempt, err := strconv.Atoi(d.Arg("attempt", "0"))
	if err != nil {
		return core.TaskManagerRegistered{}, fmt.Errorf("attempt: %w", err)
	}
	id := d.Arg("id", "")
	ev := core.TaskManagerRegistered{TaskManager: core.TaskManagerID(id), Node: core.NodeID(d.Arg("node", "node-"+id)), Slots: slots}
	for _, t := range d.Vals("tasks") {
		parts := strings.Split(t, ":")
		if len(parts) < 2 {
			return ev, fmt.Errorf("task %q: want vertex#index:slot[:kgStart-kgEnd]", t)
		}
		st, err := parseSubtask(parts[0])
		if err != nil {
			return ev, err
		}
		slot, err := strconv.Atoi(parts[1])
		if err != nil {
			return ev, fmt.Errorf("task %q: slot: %w", t, err)
		}
		rt := core.ReportedTask{Job: d.Arg("job", "job"), Run: d.Arg("run", "r1"), Attempt: core.AttemptID(attempt),
			Subtask: st, Slot: slot, State: core.TaskState(d.Arg("state", string(core.TaskRunning)))}
		if len(parts) > 2 {
			lo, hi, ok := strings.Cut(parts[2], "-")
			a, err1 := strconv.Atoi(lo)
			b, err2 := strconv.Atoi(hi)
			if !ok || err1 != nil || err2 != nil {
				return ev, fmt.Errorf("task %q: key groups: want start-end", t)
			}
			rt.KeyGroups, rt.HasKeyGroups = keygroups.Range{Start: a, End: b}, true
		}
		ev.Tasks = append(ev.Tasks, rt)
	}
	return ev, nil
}
