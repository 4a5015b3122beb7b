package exec

import (
	"sync"
	"time"

	"github.com/tidestream/tide/stream"
)

type controlKind uint8

const (
	ctlTrigger controlKind = iota
	ctlComplete
	ctlSplits
	ctlBufferTimeout
)

// control is one call from the AM queued for a subtask.
type control struct {
	kind       controlKind
	checkpoint int64
	timestamp  int64
	splits     []stream.Split
	noMore     bool
	timeout    time.Duration // ctlBufferTimeout
}

// mailbox is an unbounded FIFO of controls; put never blocks the AM's calls.
type mailbox struct {
	mu     sync.Mutex
	items  []control
	closed bool
	signal chan struct{}
}

func newMailbox() *mailbox { return &mailbox{signal: make(chan struct{}, 1)} }

// put queues c; false when the subtask has already exited.
func (m *mailbox) put(c control) bool {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.closed {
		return false
	}
	m.items = append(m.items, c)
	select {
	case m.signal <- struct{}{}:
	default:
	}
	return true
}

// take returns and clears everything queued.
func (m *mailbox) take() []control {
	m.mu.Lock()
	defer m.mu.Unlock()
	items := m.items
	m.items = nil
	return items
}

// close refuses further puts and returns what was left.
func (m *mailbox) close() []control {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.closed = true
	items := m.items
	m.items = nil
	return items
}
