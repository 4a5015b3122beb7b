package am

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"sync/atomic"
	"time"

	"github.com/tidestream/tide/core"
	"github.com/tidestream/tide/rpc"
)

// sendQueue bounds what the AM buffers for one TaskManager; a TaskManager that lets it
// fill up is too slow to be useful and is disconnected.
const sendQueue = 4096

// flushWait bounds how long a session that was given a last message (Disconnect,
// Rejected) waits for it to be written before its stream is cut anyway: a TaskManager that
// stopped reading cannot hold the connection open.
const flushWait = 5 * time.Second

// session is one TaskManager's live connection. The loop sends through it without ever
// blocking; a writer goroutine drains the queue onto the gRPC stream.
type session struct {
	id      core.TaskManagerID
	node    core.NodeID
	slots   int
	dataAdr string
	// reported are the subtasks it kept running from an earlier AM, with the splits its
	// readers received since their last completed checkpoint (see adoption.go).
	reported []core.ReportedTask
	received map[core.SubtaskID][]string

	out    chan *rpc.JobManagerMessage
	cancel context.CancelCauseFunc
	log    *slog.Logger

	closeOnce sync.Once
	done      chan struct{}
	// final: sendAndClose queued the last message; close then lets the writer deliver it.
	final atomic.Bool
}

var errQueueFull = errors.New("send queue full")

// send queues msg; on a full queue the session is closed (the TaskManager is then lost).
func (s *session) send(msg *rpc.JobManagerMessage) {
	select {
	case <-s.done:
		return
	default:
	}
	select {
	case s.out <- msg:
	default:
		s.log.Warn("TaskManager too slow, disconnecting", "taskmanager", s.id, "queued", len(s.out))
		s.close(fmt.Errorf("TaskManager %s: %w (%d messages)", s.id, errQueueFull, sendQueue))
	}
}

// sendAndClose queues msg as the last message, then ends the stream after it is written.
func (s *session) sendAndClose(msg *rpc.JobManagerMessage) {
	s.send(msg)
	s.final.Store(true)
	s.closeOnce.Do(func() { close(s.done) })
}

// close ends the stream. After sendAndClose it does not cut the last message off: the
// writer ends the stream once that message is written (see writeLoop), and the stream is
// cancelled anyway after flushWait. Otherwise the stream ends at once.
func (s *session) close(cause error) {
	s.closeOnce.Do(func() { close(s.done) })
	if s.final.Load() {
		time.AfterFunc(flushWait, func() { s.cancel(cause) })
		return
	}
	s.cancel(cause)
}

// writeLoop writes queued messages until the session closes; after close it flushes
// what is already queued (so a final Rejected or Disconnect reaches the TaskManager).
func (s *session) writeLoop(ctx context.Context, stream rpc.JobManager_ConnectServer) {
	defer s.cancel(errors.New("session writer finished"))
	for {
		select {
		case msg := <-s.out:
			if err := stream.Send(msg); err != nil {
				return
			}
		case <-s.done:
			for {
				select {
				case msg := <-s.out:
					if err := stream.Send(msg); err != nil {
						return
					}
				default:
					return
				}
			}
		case <-ctx.Done():
			return
		}
	}
}
