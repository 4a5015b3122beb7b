package ipc

import (
	"context"
	"fmt"
	"net"
	"sync"
	"time"

	"github.com/tidestream/tide/internal/hadoop/hadooppb"
)

// result is what the read loop hands to a waiting call.
type result struct {
	header  *hadooppb.RpcResponseHeaderProto
	payload []byte
	err     error
}

// conn is one established TCP connection: handshake done, a read loop dispatching replies to
// the calls waiting for them by call id.
type conn struct {
	nc   net.Conn
	addr string

	wmu sync.Mutex // serializes frame writes

	mu      sync.Mutex
	pending map[int32]chan result
	err     error // non-nil once the connection is dead
	done    chan struct{}
}

func newConn(nc net.Conn, addr string) *conn {
	c := &conn{nc: nc, addr: addr, pending: map[int32]chan result{}, done: make(chan struct{})}
	go c.readLoop()
	return c
}

// alive reports whether the connection can take new calls.
func (c *conn) alive() bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.err == nil
}

// register reserves a reply slot for id; it fails when the connection is already dead.
func (c *conn) register(id int32) (chan result, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.err != nil {
		return nil, c.err
	}
	ch := make(chan result, 1)
	c.pending[id] = ch
	return ch, nil
}

func (c *conn) unregister(id int32) {
	c.mu.Lock()
	delete(c.pending, id)
	c.mu.Unlock()
}

// write sends one frame; the context's deadline or cancellation bounds it. A failed write
// leaves a partial frame on the wire, so it kills the connection.
func (c *conn) write(ctx context.Context, frame []byte) error {
	c.wmu.Lock()
	defer c.wmu.Unlock()
	if dl, ok := ctx.Deadline(); ok {
		_ = c.nc.SetWriteDeadline(dl)
	} else {
		_ = c.nc.SetWriteDeadline(time.Time{})
	}
	stop := context.AfterFunc(ctx, func() { _ = c.nc.SetWriteDeadline(time.Now()) })
	_, err := c.nc.Write(frame)
	stop()
	if err != nil {
		if ctx.Err() != nil {
			err = fmt.Errorf("%w (%w)", context.Cause(ctx), err)
		}
		c.fail(fmt.Errorf("%w: writing to %s: %w", ErrConnectionLost, c.addr, err))
		return err
	}
	return nil
}

// fail marks the connection dead with err, fails every waiting call and closes the socket.
func (c *conn) fail(err error) {
	c.mu.Lock()
	if c.err != nil {
		c.mu.Unlock()
		return
	}
	c.err = err
	pending := c.pending
	c.pending = nil
	c.mu.Unlock()
	for _, ch := range pending {
		ch <- result{err: err}
	}
	_ = c.nc.Close()
}

// close shuts the connection down and waits for the read loop to end.
func (c *conn) close() {
	c.fail(fmt.Errorf("%w: client closed the connection to %s", ErrConnectionLost, c.addr))
	<-c.done
}

func (c *conn) readLoop() {
	defer close(c.done)
	for {
		body, err := readFrame(c.nc)
		if err != nil {
			c.fail(fmt.Errorf("%w: reading from %s: %w", ErrConnectionLost, c.addr, err))
			return
		}
		h, payload, err := decodeResponse(body)
		if err != nil {
			c.fail(fmt.Errorf("%w: bad response from %s: %w", ErrConnectionLost, c.addr, err))
			return
		}
		id := int32(h.GetCallId())
		if h.GetStatus() == hadooppb.RpcResponseHeaderProto_FATAL {
			// The server closes the connection after a fatal error; every call on it is lost.
			c.fail(remoteErrorFrom(h, ""))
			return
		}
		c.mu.Lock()
		ch, ok := c.pending[id]
		delete(c.pending, id)
		c.mu.Unlock()
		if ok {
			ch <- result{header: h, payload: payload}
		}
		// A reply nobody waits for belongs to a call whose context ended; drop it.
	}
}
