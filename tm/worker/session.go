package worker

import (
	"sync"

	"github.com/tidestream/tide/rpc"
)

// amSession is one live stream to the AM. Task goroutines send through it concurrently;
// after the stream ends, sends are dropped (the AM treats the tasks as lost anyway).
type amSession struct {
	mu     sync.Mutex
	stream rpc.JobManager_ConnectClient
	closed bool
}

func (s *amSession) send(msg *rpc.TaskManagerMessage) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return errSessionClosed
	}
	return s.stream.Send(msg)
}

// finish sends a last message (nil for none), half-closes the stream and drops every
// later send.
func (s *amSession) finish(last *rpc.TaskManagerMessage) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return
	}
	if last != nil {
		_ = s.stream.Send(last)
	}
	_ = s.stream.CloseSend()
	s.closed = true
}
