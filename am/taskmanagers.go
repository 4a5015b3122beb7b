package am

import (
	"context"
	"fmt"

	"github.com/tidestream/tide/core"
	"github.com/tidestream/tide/drivers"
	"github.com/tidestream/tide/rpc"
)

// register admits a TaskManager (loop goroutine).
func (a *AM) register(ctx context.Context, s *session) {
	log := a.log.With("taskmanager", s.id, "node", s.node, "slots", s.slots)
	if old, ok := a.sessions[s.id]; ok {
		reason := fmt.Sprintf("TaskManager id %s is already registered from node %s; give each TaskManager its own id", s.id, old.node)
		log.Warn("refusing duplicate TaskManager", "reason", reason)
		s.sendAndClose(rejectedMsg(reason))
		return
	}
	if ad, ok := a.driver.(drivers.Admitter); ok {
		if err := ad.Admit(ctx, drivers.Worker{ID: s.id, Node: s.node}); err != nil {
			log.Warn("driver refused TaskManager", "err", err)
			s.sendAndClose(rejectedMsg(err.Error()))
			return
		}
	}
	a.sessions[s.id] = s
	s.send(&rpc.JobManagerMessage{Kind: &rpc.JobManagerMessage_Registered{Registered: &rpc.Registered{
		JobId:                   a.cfg.JobID,
		JobName:                 a.cfg.JobName,
		JobArgs:                 a.cfg.JobArgs,
		Config:                  a.registeredConfig(),
		HeartbeatIntervalMillis: a.cfg.HeartbeatInterval.Milliseconds(),
		RunId:                   a.runID,
	}}})
	log.Info("TaskManager registered", "dataAddress", s.dataAdr)
	a.view.taskManagerJoined(s, a.clock.Now())
	if len(s.reported) > 0 {
		log.Info("TaskManager kept subtasks running from an earlier AM", "subtasks", len(s.reported))
	}
	a.step(core.TaskManagerRegistered{TaskManager: s.id, Node: s.node, Slots: s.slots, Tasks: s.reported})
}

// sessionEnded: the stream of s is over (loop goroutine).
func (a *AM) sessionEnded(s *session, reason string) {
	if cur, ok := a.sessions[s.id]; !ok || cur != s {
		return // refused, or already released
	}
	if sd, ok := a.driver.(interface{ Forget(core.TaskManagerID) }); ok {
		sd.Forget(s.id)
	}
	a.lose(s.id, reason)
}

// lose removes a TaskManager and tells the core (loop goroutine).
func (a *AM) lose(id core.TaskManagerID, reason string) {
	s, ok := a.sessions[id]
	if !ok {
		return
	}
	delete(a.sessions, id)
	s.close(fmt.Errorf("TaskManager %s lost: %s", id, reason))
	a.ckpt.writersGone(id)
	a.log.Warn("TaskManager lost", "taskmanager", id, "node", s.node, "reason", reason)
	a.view.taskManagerLeft(id)
	a.step(core.TaskManagerLost{TaskManager: id, Reason: reason})
}

// handle processes one message of a registered TaskManager (loop goroutine).
func (a *AM) handle(s *session, msg *rpc.TaskManagerMessage) {
	if cur, ok := a.sessions[s.id]; !ok || cur != s {
		return
	}
	switch m := msg.GetKind().(type) {
	case *rpc.TaskManagerMessage_Heartbeat:
		a.step(core.TaskManagerHeartbeat{TaskManager: s.id})
	case *rpc.TaskManagerMessage_TaskState:
		a.taskState(s, m.TaskState)
	case *rpc.TaskManagerMessage_CheckpointAck:
		ack := m.CheckpointAck
		a.ckpt.ack(core.AttemptID(ack.GetAttempt()), core.CheckpointID(ack.GetCheckpointId()),
			core.SubtaskID{Vertex: core.VertexID(ack.GetVertex()), Index: int(ack.GetIndex())}, ack.GetHandles())
	case *rpc.TaskManagerMessage_CheckpointDecline:
		d := m.CheckpointDecline
		a.ckpt.decline(core.AttemptID(d.GetAttempt()), core.CheckpointID(d.GetCheckpointId()),
			core.SubtaskID{Vertex: core.VertexID(d.GetVertex()), Index: int(d.GetIndex())}, d.GetReason())
	case *rpc.TaskManagerMessage_SplitRequest:
		r := m.SplitRequest
		a.splitRequest(s, core.AttemptID(r.GetAttempt()), core.VertexID(r.GetVertex()), int(r.GetIndex()), r.GetAhead())
	case *rpc.TaskManagerMessage_InputEnded:
		r := m.InputEnded
		a.inputEnded(core.AttemptID(r.GetAttempt()), core.SubtaskID{Vertex: core.VertexID(r.GetVertex()), Index: int(r.GetIndex())})
	case *rpc.TaskManagerMessage_Unregister:
		a.log.Info("TaskManager unregistering", "taskmanager", s.id, "reason", m.Unregister.GetReason())
		if sd, ok := a.driver.(interface{ Forget(core.TaskManagerID) }); ok {
			sd.Forget(s.id)
		}
		a.lose(s.id, "unregistered: "+m.Unregister.GetReason())
	case *rpc.TaskManagerMessage_TaskMetrics:
		a.metrics.tasks.record(s.id, s.node, m.TaskMetrics, a.clock.Now())
		a.warm.restored(m.TaskMetrics)
	case *rpc.TaskManagerMessage_WarmupProgress:
		a.warmupProgress(s, m.WarmupProgress)
	case *rpc.TaskManagerMessage_Register:
		a.log.Warn("ignoring second Register on one connection", "taskmanager", s.id)
	default:
		a.log.Warn("ignoring unknown message", "taskmanager", s.id, "type", fmt.Sprintf("%T", m))
	}
}

func (a *AM) taskState(s *session, u *rpc.TaskStateUpdate) {
	attempt := core.AttemptID(u.GetAttempt())
	st := core.TaskState(u.GetState())
	sub := core.SubtaskID{Vertex: core.VertexID(u.GetVertex()), Index: int(u.GetIndex())}
	if st == core.TaskFailed || st == core.TaskCanceled {
		a.ckpt.writerStopped(attempt, sub) // of any attempt: it writes no checkpoint files any more
	}
	if d := a.deployment; d != nil && d.attempt == attempt {
		d.states[sub] = st
		if st == core.TaskFailed {
			a.log.Warn("subtask failed", "attempt", attempt, "subtask", sub, "taskmanager", s.id, "err", u.GetError(),
				"lost_peer", u.GetLostPeerTaskManager())
		}
		if st == core.TaskFailed || st == core.TaskCanceled {
			a.ckpt.subtaskStopped(attempt, sub)
		}
		if st == core.TaskRunning || st == core.TaskFinished {
			a.noteRunning(d)
		}
	}
	a.step(core.TaskStateChanged{Attempt: attempt, Subtask: sub, State: st, Error: u.GetError(), Unrecoverable: u.GetUnrecoverable(),
		LostPeer: core.TaskManagerID(u.GetLostPeerTaskManager())})
}
