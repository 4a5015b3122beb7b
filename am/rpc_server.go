package am

import (
	"context"
	"errors"
	"fmt"
	"io"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"

	"github.com/tidestream/tide/core"
	"github.com/tidestream/tide/rpc"
)

// ErrBuildMismatch is wrapped by the refusal of a TaskManager from another build.
var ErrBuildMismatch = errors.New("TaskManager runs a different build than the AM")

// rpcServer implements rpc.JobManagerServer: one Connect stream per TaskManager.
type rpcServer struct {
	rpc.UnimplementedJobManagerServer
	am *AM
}

func rejectedMsg(reason string) *rpc.JobManagerMessage {
	return &rpc.JobManagerMessage{Kind: &rpc.JobManagerMessage_Rejected{Rejected: &rpc.Rejected{Reason: reason}}}
}

// Connect serves one TaskManager for its whole life. The stream's end, for whatever
// reason, is the TaskManager's loss.
func (r *rpcServer) Connect(stream rpc.JobManager_ConnectServer) error {
	a := r.am
	// The headers (with the proof of the internal secret, when the AM has one) go out
	// before the AM reads anything: a TaskManager that holds a secret checks them and
	// leaves before registering, so this AM never counts slots that will not serve it.
	if err := stream.SendHeader(metadata.MD{}); err != nil {
		return err
	}
	first, err := stream.Recv()
	if err != nil {
		return status.Errorf(codes.InvalidArgument, "expected Register as the first message: %v", err)
	}
	reg := first.GetRegister()
	if reg == nil {
		return status.Errorf(codes.InvalidArgument, "expected Register as the first message, got %T", first.GetKind())
	}
	if reg.GetTaskManagerId() == "" || reg.GetSlots() < 1 {
		reason := fmt.Sprintf("invalid registration: task_manager_id %q, slots %d: expected a non-empty id and at least one slot",
			reg.GetTaskManagerId(), reg.GetSlots())
		_ = stream.Send(rejectedMsg(reason))
		return status.Error(codes.InvalidArgument, reason)
	}
	if reg.GetBuildId() != rpc.BuildID() {
		err := fmt.Errorf("TaskManager %s on node %s: %w (TaskManager build %q, AM build %q); start it from the same tide binary",
			reg.GetTaskManagerId(), reg.GetNodeId(), ErrBuildMismatch, reg.GetBuildId(), rpc.BuildID())
		a.log.Error("refusing TaskManager", "taskmanager", reg.GetTaskManagerId(), "node", reg.GetNodeId(),
			"tmBuild", reg.GetBuildId(), "amBuild", rpc.BuildID())
		_ = stream.Send(rejectedMsg(err.Error()))
		return status.Error(codes.FailedPrecondition, err.Error())
	}

	ctx, cancel := context.WithCancelCause(stream.Context())
	defer cancel(errors.New("connection finished"))
	s := &session{
		id:       core.TaskManagerID(reg.GetTaskManagerId()),
		node:     core.NodeID(reg.GetNodeId()),
		slots:    int(reg.GetSlots()),
		dataAdr:  reg.GetDataAddress(),
		reported: reportedTasks(reg),
		received: receivedSplits(reg),
		out:      make(chan *rpc.JobManagerMessage, sendQueue),
		cancel:   cancel,
		log:      a.log,
		done:     make(chan struct{}),
	}
	writerDone := make(chan struct{})
	go func() { defer close(writerDone); s.writeLoop(ctx, stream) }()
	defer func() { <-writerDone }()

	highest := reg.GetFailoverHighestCheckpoint()
	if !a.post(func() { a.ckpt.skipIDs(highest); a.register(ctx, s) }) {
		if a.handOff.Load() {
			// Not a rejection: the TaskManager retries and finds the next AM.
			return status.Error(codes.Unavailable, "the AM is stopping; the next AM adopts the running subtasks")
		}
		s.sendAndClose(rejectedMsg("the AM is shutting down"))
		return status.Error(codes.Unavailable, "the AM is shutting down")
	}

	recvErr := make(chan error, 1)
	go func() {
		for {
			msg, err := stream.Recv()
			if err != nil {
				recvErr <- err
				return
			}
			if !a.post(func() { a.handle(s, msg) }) {
				recvErr <- errors.New("AM loop stopped")
				return
			}
		}
	}()
	var cause error
	select {
	case cause = <-recvErr:
	case <-ctx.Done():
		cause = context.Cause(ctx)
	}
	s.close(cause)
	reason := "connection closed"
	if cause != nil && !errors.Is(cause, io.EOF) {
		reason = fmt.Sprintf("connection lost: %v", cause)
	}
	a.post(func() { a.sessionEnded(s, reason) })
	return nil
}
