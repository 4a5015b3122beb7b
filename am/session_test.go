package am

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"sync"
	"testing"
	"time"

	"google.golang.org/grpc"

	"github.com/tidestream/tide/rpc"
)

// blockingStream is a Connect stream whose first Send blocks until release is closed,
// so the messages behind it are still queued when the session closes.
type blockingStream struct {
	grpc.ServerStream
	release chan struct{}

	mu   sync.Mutex
	sent []*rpc.JobManagerMessage
}

func (b *blockingStream) Send(m *rpc.JobManagerMessage) error {
	b.mu.Lock()
	first := len(b.sent) == 0
	b.sent = append(b.sent, m)
	b.mu.Unlock()
	if first {
		<-b.release
	}
	return nil
}

func (b *blockingStream) Recv() (*rpc.TaskManagerMessage, error) { return nil, io.EOF }
func (b *blockingStream) Context() context.Context               { return context.Background() }

func (b *blockingStream) gotDisconnect() bool {
	b.mu.Lock()
	defer b.mu.Unlock()
	for _, m := range b.sent {
		if m.GetDisconnect() != nil {
			return true
		}
	}
	return false
}

// A released TaskManager is sent Disconnect and lost right after (the standalone driver's
// release, then OnWorkerTerminated): the loss must not cut the Disconnect off. Before the
// fix, close cancelled the stream at once and the writer dropped the queued Disconnect in
// about a third of the runs; 40 runs make that certain.
func TestReleasedTaskManagerGetsItsDisconnect(t *testing.T) {
	for i := range 40 {
		stream := &blockingStream{release: make(chan struct{})}
		ctx, cancel := context.WithCancelCause(context.Background())
		s := &session{id: "tm-1", out: make(chan *rpc.JobManagerMessage, sendQueue), cancel: cancel,
			log: slog.New(slog.DiscardHandler), done: make(chan struct{})}
		writerDone := make(chan struct{})
		go func() { defer close(writerDone); s.writeLoop(ctx, stream) }()

		s.send(&rpc.JobManagerMessage{Kind: &rpc.JobManagerMessage_Cancel{Cancel: &rpc.CancelTasks{Attempt: 1}}})
		for {
			stream.mu.Lock()
			n := len(stream.sent)
			stream.mu.Unlock()
			if n == 1 {
				break
			}
			time.Sleep(time.Millisecond)
		}
		s.sendAndClose(disconnectMsg("released by the AM"))
		s.close(errors.New("TaskManager tm-1 lost: released by the AM"))
		close(stream.release)
		select {
		case <-writerDone:
		case <-time.After(time.Minute):
			t.Fatal("session writer did not finish")
		}
		if !stream.gotDisconnect() {
			t.Fatalf("run %d: the released TaskManager never got its Disconnect", i)
		}
	}
}
