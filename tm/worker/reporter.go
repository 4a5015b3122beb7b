package worker

import (
	"errors"

	"github.com/tidestream/tide/rpc"
	"github.com/tidestream/tide/tm/exec"
)

var errSessionClosed = errors.New("AM session closed")

// reporter forwards the executor's reports to the AM (it implements exec.Reporter),
// turning the TaskManager's attempt ids back into the AM's attempt numbers.
type reporter struct {
	s     *amSession
	space attemptSpace
}

var _ exec.Reporter = reporter{}

func (r reporter) TaskState(attempt int64, vertex string, index int, state string, err error, unrecoverable bool) {
	msg := ""
	if err != nil {
		msg = err.Error()
	}
	_ = r.s.send(&rpc.TaskManagerMessage{Kind: &rpc.TaskManagerMessage_TaskState{TaskState: &rpc.TaskStateUpdate{
		Attempt: r.space.am(attempt), Vertex: vertex, Index: int32(index), State: state, Error: msg, Unrecoverable: unrecoverable}}})
}

func (r reporter) CheckpointAck(attempt, checkpointID int64, vertex string, index int, handles []exec.StateHandle) {
	hs := make([]*rpc.StateHandle, 0, len(handles))
	for _, h := range handles {
		hs = append(hs, &rpc.StateHandle{Name: h.Name, Size: h.Size})
	}
	_ = r.s.send(&rpc.TaskManagerMessage{Kind: &rpc.TaskManagerMessage_CheckpointAck{CheckpointAck: &rpc.CheckpointAck{
		Attempt: r.space.am(attempt), CheckpointId: checkpointID, Vertex: vertex, Index: int32(index), Handles: hs}}})
}

func (r reporter) CheckpointDecline(attempt, checkpointID int64, vertex string, index int, reason string) {
	_ = r.s.send(&rpc.TaskManagerMessage{Kind: &rpc.TaskManagerMessage_CheckpointDecline{CheckpointDecline: &rpc.CheckpointDecline{
		Attempt: r.space.am(attempt), CheckpointId: checkpointID, Vertex: vertex, Index: int32(index), Reason: reason}}})
}

func (r reporter) RequestSplit(attempt int64, vertex string, index int) {
	_ = r.s.send(&rpc.TaskManagerMessage{Kind: &rpc.TaskManagerMessage_SplitRequest{SplitRequest: &rpc.SplitRequest{
		Attempt: r.space.am(attempt), Vertex: vertex, Index: int32(index)}}})
}
