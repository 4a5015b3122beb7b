package am

import (
	"sort"

	"github.com/tidestream/tide/core"
	"github.com/tidestream/tide/rpc"
)

// deployment is the current attempt as the AM carries it out.
type deployment struct {
	attempt     core.AttemptID
	restoreFrom core.CheckpointID
	vertices    []core.VertexDeployment
	// where each subtask runs
	placement map[core.SubtaskID]core.TaskManagerID
	states    map[core.SubtaskID]core.TaskState
	// inputEnded are the source subtasks that read their whole input (checkpoint_final.go).
	inputEnded map[core.SubtaskID]bool
}

// checkpointable reports whether a checkpoint can be taken: every subtask runs or has
// finished (finished ones acknowledge at once with no state), and at least one runs.
func (d *deployment) checkpointable() bool {
	running := false
	for _, st := range d.states {
		switch st {
		case core.TaskRunning:
			running = true
		case core.TaskFinished:
		default:
			return false
		}
	}
	return running
}

func (d *deployment) subtasks() []core.SubtaskID {
	out := make([]core.SubtaskID, 0, len(d.placement))
	for s := range d.placement {
		out = append(out, s)
	}
	sort.Slice(out, func(i, j int) bool {
		if out[i].Vertex != out[j].Vertex {
			return out[i].Vertex < out[j].Vertex
		}
		return out[i].Index < out[j].Index
	})
	return out
}

// deploy sends every TaskManager its part of the attempt, with the locations of all
// subtasks so producers can connect to consumers (loop goroutine).
func (a *AM) deploy(e core.Deploy) {
	if e.Adopted {
		a.adoptDeployment(e)
		return
	}
	if latest := a.ckpt.latest(); latest > e.RestoreFrom {
		// The checkpoint coordinator is the authority on what is complete: restoring
		// anything older would replay output a two-phase sink already committed.
		a.log.Warn("restoring from a newer checkpoint than the scheduler named", "scheduler", e.RestoreFrom, "latest", latest)
		e.RestoreFrom = latest
	}
	d := &deployment{
		attempt:     e.Attempt,
		restoreFrom: e.RestoreFrom,
		vertices:    e.Vertices,
		placement:   map[core.SubtaskID]core.TaskManagerID{},
		states:      map[core.SubtaskID]core.TaskState{},
	}
	perTM := map[core.TaskManagerID][]*rpc.Subtask{}
	var locations []*rpc.Location
	for _, sa := range e.Slots {
		s := a.sessions[sa.Slot.TaskManager]
		addr := ""
		if s != nil {
			addr = s.dataAdr
		}
		for _, sub := range sa.Subtasks {
			d.placement[sub] = sa.Slot.TaskManager
			d.states[sub] = core.TaskDeploying
			perTM[sa.Slot.TaskManager] = append(perTM[sa.Slot.TaskManager], &rpc.Subtask{
				Vertex: string(sub.Vertex), Index: int32(sub.Index), Slot: int32(sa.Slot.Index)})
			locations = append(locations, &rpc.Location{
				Vertex: string(sub.Vertex), Index: int32(sub.Index),
				TaskManagerId: string(sa.Slot.TaskManager), DataAddress: addr})
		}
	}
	vertices := make([]*rpc.VertexParallelism, 0, len(e.Vertices))
	parallelism := map[core.VertexID]int{}
	for _, v := range e.Vertices {
		parallelism[v.Vertex] = v.Parallelism
		vp := &rpc.VertexParallelism{
			Vertex: string(v.Vertex), Parallelism: int32(v.Parallelism), MaxParallelism: int32(v.MaxParallelism)}
		for _, r := range v.KeyGroups {
			vp.KeyGroupStart = append(vp.KeyGroupStart, int32(r.Start))
			vp.KeyGroupEnd = append(vp.KeyGroupEnd, int32(r.End))
		}
		vertices = append(vertices, vp)
	}
	a.deployment = d
	a.recordDeployment(a.runID, e)
	a.view.deployed(e, a.clock.Now())
	a.ckpt.deployed(e.Attempt, e.RestoreFrom)
	// A source coordinator that cannot start fails the job over once the attempt is
	// deployed: the TaskManagers report its subtasks cancelled, so the failover completes.
	srcErr := a.src.reset(e.Attempt, parallelism, a.ckpt.coordinatorState(e.RestoreFrom), e.RestoreFrom)
	if srcErr != nil {
		a.log.Error("source coordinator failed; failing the job over", "attempt", e.Attempt, "err", srcErr)
		defer a.step(core.GlobalFailure{Error: srcErr.Error()})
	}
	a.log.Info("deploying attempt", "attempt", e.Attempt, "restoreFrom", e.RestoreFrom,
		"parallelism", parallelism, "taskmanagers", len(perTM))
	for tm, subs := range perTM {
		s, ok := a.sessions[tm]
		if !ok {
			a.log.Warn("deploying to a TaskManager that is gone", "taskmanager", tm, "attempt", e.Attempt)
			continue
		}
		s.send(&rpc.JobManagerMessage{Kind: &rpc.JobManagerMessage_Deploy{Deploy: &rpc.DeployTasks{
			Attempt:     int64(e.Attempt),
			RestoreFrom: int64(e.RestoreFrom),
			Vertices:    vertices,
			Subtasks:    subs,
			Locations:   locations,
			RunId:       a.runID,
			// A bounded job waits for a final checkpoint only if one will come.
			CheckpointingEnabled: a.ckpt.store != nil && a.ckpt.interval > 0,
			// Set when the attempt restores the savepoint the job started from.
			RestoreLocation: a.ckpt.restoreLocation(e.RestoreFrom),
		}}})
	}
}
