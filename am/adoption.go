package am

import (
	"github.com/tidestream/tide/core"
	"github.com/tidestream/tide/core/keygroups"
	"github.com/tidestream/tide/rpc"
)

// Task adoption after an AM failover (issue 13; the decision is core/adoption.go's). The
// previous AM persisted which deployment ran (amState.Deployment); the TaskManagers that
// kept its subtasks running report them when they register (Register.failover_tasks); the
// core adopts them (Deploy with Adopted) or has them cancelled (CancelReported).

// persistedDeployment is the deployment an AM ran, as the next AM attempt reads it.
type persistedDeployment struct {
	Run         string                `json:"run"`
	Attempt     core.AttemptID        `json:"attempt"`
	Parallelism map[core.VertexID]int `json:"parallelism"`
	// Placement is the TaskManager of each subtask index by slot-sharing group: without
	// adoption, the next attempt deploys subtasks where their local state is.
	Placement map[string][]string `json:"placement,omitempty"`
}

// reportedTasks turns a registration's report into the core's terms.
func reportedTasks(reg *rpc.Register) []core.ReportedTask {
	out := make([]core.ReportedTask, 0, len(reg.GetFailoverTasks()))
	for _, t := range reg.GetFailoverTasks() {
		out = append(out, core.ReportedTask{Job: reg.GetFailoverJobId(), Run: t.GetRunId(), Attempt: core.AttemptID(t.GetAttempt()),
			Subtask: core.SubtaskID{Vertex: core.VertexID(t.GetVertex()), Index: int(t.GetIndex())}, Slot: int(t.GetSlot()),
			State:     core.TaskState(t.GetState()),
			KeyGroups: keygroups.Range{Start: int(t.GetKeyGroupStart()), End: int(t.GetKeyGroupEnd())}, HasKeyGroups: t.GetHasKeyGroups()})
	}
	return out
}

// receivedSplits are the splits each source subtask reported receiving since its last
// completed checkpoint.
func receivedSplits(reg *rpc.Register) map[core.SubtaskID][]string {
	out := map[core.SubtaskID][]string{}
	for _, t := range reg.GetFailoverTasks() {
		if len(t.GetReceivedSplits()) > 0 {
			out[core.SubtaskID{Vertex: core.VertexID(t.GetVertex()), Index: int(t.GetIndex())}] = t.GetReceivedSplits()
		}
	}
	return out
}

// recordDeployment notes the deployment now running, for the next AM attempt.
func (a *AM) recordDeployment(run string, e core.Deploy) {
	p := make(map[core.VertexID]int, len(e.Vertices))
	for _, v := range e.Vertices {
		p[v.Vertex] = v.Parallelism
	}
	a.deployRecord = &persistedDeployment{Run: run, Attempt: e.Attempt, Parallelism: p, Placement: a.sched.Placement()}
	a.stateDirty = true
}

// adoptDeployment takes over the deployment the TaskManagers kept running (loop
// goroutine): nothing is deployed; they are told to carry on and to send what they held
// back, and the source coordinator is rebuilt from the checkpoint and the split log.
func (a *AM) adoptDeployment(e core.Deploy) {
	run := ""
	if a.recovered != nil {
		run = a.recovered.Run
	}
	latest := a.ckpt.latest()
	d := &deployment{attempt: e.Attempt, restoreFrom: latest, vertices: e.Vertices,
		placement: map[core.SubtaskID]core.TaskManagerID{}, states: map[core.SubtaskID]core.TaskState{}}
	parallelism := map[core.VertexID]int{}
	for _, v := range e.Vertices {
		parallelism[v.Vertex] = v.Parallelism
	}
	tms := map[core.TaskManagerID]bool{}
	for _, sa := range e.Slots {
		tms[sa.Slot.TaskManager] = true
		for _, sub := range sa.Subtasks {
			d.placement[sub] = sa.Slot.TaskManager
			d.states[sub] = core.TaskRunning
		}
	}
	a.deployment = d
	e.RestoreFrom = 0 // the adopted attempt restored nothing: it kept running
	a.view.deployed(e, a.clock.Now())
	a.ckpt.deployed(e.Attempt, 0)
	a.ckpt.abandonInFlight(e.Attempt, d.placement)
	received := map[core.SubtaskID][]string{}
	for tm := range tms {
		if s, ok := a.sessions[tm]; ok {
			for sub, ids := range s.received {
				received[sub] = ids
			}
		}
	}
	resend, srcErr := a.src.adopt(e.Attempt, parallelism, a.ckpt.coordinatorState(latest), latest, received)
	a.log.Info("adopting the deployment the TaskManagers kept running: no subtask restarts", "attempt", e.Attempt,
		"run", run, "parallelism", parallelism, "taskmanagers", len(tms), "latestCheckpoint", latest)
	msg := &rpc.JobManagerMessage{Kind: &rpc.JobManagerMessage_FailoverAdopt{FailoverAdopt: &rpc.FailoverAdopt{
		Attempt: int64(e.Attempt), RunId: run}}}
	// The lost AM may have died between writing a checkpoint's _metadata and telling the
	// subtasks: the latest complete checkpoint is announced again, so two-phase sinks commit
	// what they pre-committed for it now (committing twice is a no-op) instead of at the
	// next checkpoint, or never if the job ends without one.
	var complete *rpc.JobManagerMessage
	if latest > 0 {
		complete = checkpointCompleteMessage(int64(e.Attempt), int64(latest))
	}
	for tm := range tms {
		if s, ok := a.sessions[tm]; ok {
			s.send(msg)
			if complete != nil {
				s.send(complete)
			}
		}
	}
	a.recordDeployment(run, e)
	if srcErr != nil {
		a.log.Error("source coordinator cannot be rebuilt for the adopted attempt; failing the job over", "attempt", e.Attempt, "err", srcErr)
		defer a.step(core.GlobalFailure{Error: "AM failover: " + srcErr.Error()})
		return
	}
	for sub, splits := range resend {
		tm := d.placement[sub]
		s, ok := a.sessions[tm]
		if !ok {
			continue
		}
		out := make([]*rpc.Split, 0, len(splits))
		for _, sp := range splits {
			out = append(out, &rpc.Split{Id: sp.ID, Data: sp.Data})
		}
		a.log.Info("sending a reader the splits the lost AM logged but never sent", "subtask", sub, "splits", len(splits))
		s.send(&rpc.JobManagerMessage{Kind: &rpc.JobManagerMessage_SplitAssignment{SplitAssignment: &rpc.SplitAssignment{
			Attempt: int64(e.Attempt), Vertex: string(sub.Vertex), Index: int32(sub.Index), Splits: out}}})
	}
}

// cancelReported tells a TaskManager to cancel subtasks it reported and that were not
// adopted (loop goroutine).
func (a *AM) cancelReported(e core.CancelReported) {
	a.log.Info("cancelling the subtasks a TaskManager kept from the previous AM", "taskmanager", e.TaskManager,
		"attempt", e.Attempt, "run", e.Run, "reason", e.Reason)
	if s, ok := a.sessions[e.TaskManager]; ok {
		s.send(&rpc.JobManagerMessage{Kind: &rpc.JobManagerMessage_FailoverCancel{FailoverCancel: &rpc.FailoverCancel{
			Attempt: int64(e.Attempt), RunId: e.Run, Reason: e.Reason}}})
	}
}
