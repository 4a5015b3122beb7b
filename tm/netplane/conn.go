package netplane

import (
	"bufio"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"sync"
	"time"
)

// shutdownTimeout bounds how long a closing plane spends writing frames that
// were already queued (typically END frames) to a peer.
const shutdownTimeout = 5 * time.Second

// outFrame is a frame queued for the connection's writer.
type outFrame struct {
	typ     frameType
	stream  uint32
	payload []byte
	pooled  bool // payload returns to the plane's buffer pool once written
}

// conn is one TCP connection between two planes, multiplexing every channel
// from the dialing (producing) plane to the accepting (consuming) plane. A
// reader goroutine dispatches incoming frames; a writer goroutine drains the
// frame queue, coalescing frames into writes of Options.BatchBytes.
type conn struct {
	plane  *Plane
	nc     net.Conn
	br     *bufio.Reader
	peer   string // the peer plane's listen address, for errors and logs
	dialer bool   // true on the producing side
	key    string // map key in Plane.dialed (dialer only)
	log    *slog.Logger

	mu         sync.Mutex
	queue      []outFrame
	spare      []outFrame
	draining   bool
	closed     bool
	nextStream uint32
	outputs    map[uint32]*Output // dialer side
	inputs     map[uint32]*Input  // accepting side

	wake chan struct{} // capacity 1: the queue is non-empty or draining
	done chan struct{} // closed when the connection fails or closes
}

func newConn(p *Plane, nc net.Conn, br *bufio.Reader, peer string, dialer bool) *conn {
	return &conn{
		plane:   p,
		nc:      nc,
		br:      br,
		peer:    peer,
		dialer:  dialer,
		log:     p.log.With("peer", peer, "remote", nc.RemoteAddr().String()),
		outputs: make(map[uint32]*Output),
		inputs:  make(map[uint32]*Input),
		wake:    make(chan struct{}, 1),
		done:    make(chan struct{}),
	}
}

func (c *conn) notifyWriter() {
	select {
	case c.wake <- struct{}{}:
	default:
	}
}

// enqueue queues a frame; it is dropped once the connection is closed.
func (c *conn) enqueue(f outFrame) {
	c.mu.Lock()
	if c.closed {
		c.mu.Unlock()
		if f.pooled {
			c.plane.pool.put(f.payload)
		}
		return
	}
	c.queue = append(c.queue, f)
	c.mu.Unlock()
	c.notifyWriter()
}

// reset aborts the channel on stream at the peer, saying why. A channel that fails
// because this plane closes is not reset: the peer then sees the connection end, which
// names this TaskManager as the peer it lost (a reset would say only that the channel
// was aborted, and the peer's subtask would fail as if on its own).
func (c *conn) reset(stream uint32, cause error) {
	if errors.Is(cause, ErrPlaneClosed) {
		return
	}
	c.enqueue(outFrame{typ: frameReset, stream: stream, payload: resetReason(cause.Error())})
}

// addOutput registers o under a fresh stream id and sends OPEN.
func (c *conn) addOutput(o *Output) error {
	payload, err := appendChannelID(nil, o.id)
	if err != nil {
		return err
	}
	c.mu.Lock()
	if c.closed {
		c.mu.Unlock()
		return &PeerLostError{Channel: o.id, Peer: c.peer}
	}
	c.nextStream++
	stream := c.nextStream
	c.mu.Unlock()
	// The link is in place before OPEN is sent, hence before any credit.
	o.setLink(remoteProducerLink{c: c, stream: stream})
	c.mu.Lock()
	if c.closed {
		c.mu.Unlock()
		return &PeerLostError{Channel: o.id, Peer: c.peer}
	}
	c.outputs[stream] = o
	c.queue = append(c.queue, outFrame{typ: frameOpen, stream: stream, payload: payload})
	c.mu.Unlock()
	c.notifyWriter()
	return nil
}

func (c *conn) removeOutput(stream uint32) {
	c.mu.Lock()
	delete(c.outputs, stream)
	c.mu.Unlock()
}

func (c *conn) removeInput(stream uint32) {
	c.mu.Lock()
	delete(c.inputs, stream)
	c.mu.Unlock()
}

func (c *conn) output(stream uint32) *Output {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.outputs[stream]
}

func (c *conn) input(stream uint32, remove bool) *Input {
	c.mu.Lock()
	defer c.mu.Unlock()
	in := c.inputs[stream]
	if remove {
		delete(c.inputs, stream)
	}
	return in
}

// shutdown writes what is queued and then closes the connection.
func (c *conn) shutdown() {
	c.mu.Lock()
	if c.closed {
		c.mu.Unlock()
		return
	}
	c.draining = true
	c.mu.Unlock()
	_ = c.nc.SetWriteDeadline(time.Now().Add(shutdownTimeout))
	c.notifyWriter()
}

// fail closes the connection and fails every channel still open on it with
// an error naming the peer.
func (c *conn) fail(cause error) {
	c.mu.Lock()
	if c.closed {
		c.mu.Unlock()
		return
	}
	c.closed = true
	outs, ins := c.outputs, c.inputs
	c.outputs, c.inputs = nil, nil
	queued := c.queue
	c.queue = nil
	c.mu.Unlock()
	close(c.done)
	_ = c.nc.Close()
	c.plane.forgetConn(c)
	for _, f := range queued {
		if f.pooled {
			c.plane.pool.put(f.payload)
		}
	}
	if errors.Is(cause, ErrPlaneClosed) {
		c.log.Debug("netplane connection closed")
	} else {
		c.log.Warn("netplane connection failed", "err", cause, "channels", len(outs)+len(ins))
	}
	for _, o := range outs {
		o.fail(&PeerLostError{Channel: o.id, Peer: c.peer, Cause: cause}, false)
	}
	for _, in := range ins {
		in.fail(&PeerLostError{Channel: in.id, Peer: c.peer, Cause: cause}, false)
	}
}

// writeLoop drains the frame queue until the connection closes.
func (c *conn) writeLoop() {
	bw := bufio.NewWriterSize(c.nc, c.plane.opts.BatchBytes)
	for {
		select {
		case <-c.wake:
		case <-c.done:
			return
		}
		c.mu.Lock()
		batch, draining := c.queue, c.draining
		c.queue = c.spare[:0]
		c.mu.Unlock()
		var err error
		for k, f := range batch {
			if err == nil {
				err = writeFrame(bw, f.typ, f.stream, f.payload)
			}
			if f.pooled {
				c.plane.pool.put(f.payload)
			}
			batch[k] = outFrame{}
		}
		c.mu.Lock()
		c.spare = batch[:0]
		c.mu.Unlock()
		if err == nil {
			err = bw.Flush()
		}
		if err != nil {
			c.fail(fmt.Errorf("writing to %s: %w", c.nc.RemoteAddr(), err))
			return
		}
		if draining {
			c.mu.Lock()
			empty := len(c.queue) == 0
			c.mu.Unlock()
			if empty {
				c.fail(ErrPlaneClosed)
				return
			}
			c.notifyWriter()
		}
	}
}

// readLoop dispatches incoming frames until the connection fails.
func (c *conn) readLoop() {
	for {
		f, err := readFrame(c.br, c.plane.pool.get)
		if err == nil {
			err = c.dispatch(f)
		}
		if err != nil {
			c.fail(err)
			return
		}
	}
}

func (c *conn) dispatch(f frame) error {
	if c.dialer {
		return c.dispatchToOutput(f)
	}
	return c.dispatchToInput(f)
}

// dispatchToOutput handles frames a consumer sends back to its producer.
func (c *conn) dispatchToOutput(f frame) error {
	switch f.typ {
	case frameCredit:
		n, err := decodeCredit(f.payload)
		if err != nil {
			return fmt.Errorf("stream %d: %w", f.stream, err)
		}
		if o := c.output(f.stream); o != nil {
			o.addCredit(n)
		}
		return nil
	case frameReset:
		o := c.output(f.stream)
		if o != nil {
			c.removeOutput(f.stream)
			o.fail(fmt.Errorf("channel %s: %w by consumer on %s: %s", o.id, ErrChannelReset, c.peer, f.payload), false)
		}
		return nil
	default:
		return fmt.Errorf("%w: unexpected %s frame from consumer %s", ErrProtocol, f.typ, c.peer)
	}
}

// dispatchToInput handles frames a producer sends to its consumers.
func (c *conn) dispatchToInput(f frame) error {
	switch f.typ {
	case frameOpen:
		id, err := decodeChannelID(f.payload)
		if err != nil {
			return fmt.Errorf("OPEN on stream %d: %w", f.stream, err)
		}
		c.mu.Lock()
		_, dup := c.inputs[f.stream]
		c.mu.Unlock()
		if dup {
			return fmt.Errorf("%w: OPEN for stream %d (channel %s) that is already open", ErrProtocol, f.stream, id)
		}
		in, err := c.plane.attachProducer(id, remoteConsumerLink{c: c, stream: f.stream})
		if err != nil {
			c.reset(f.stream, err)
			return nil
		}
		c.mu.Lock()
		closed := c.closed
		if !closed {
			c.inputs[f.stream] = in
		}
		c.mu.Unlock()
		if closed {
			in.fail(&PeerLostError{Channel: id, Peer: c.peer}, false)
		}
		return nil
	case frameData:
		in := c.input(f.stream, false)
		if in == nil {
			c.plane.pool.put(f.payload) // channel already released here
			return nil
		}
		if err := in.deliver(f.payload, nil); err != nil {
			in.fail(err, true)
		}
		return nil
	case frameEnd:
		if in := c.input(f.stream, true); in != nil {
			in.end()
		}
		return nil
	case frameReset:
		if in := c.input(f.stream, true); in != nil {
			in.fail(fmt.Errorf("channel %s: %w by producer on %s: %s", in.id, ErrChannelReset, c.peer, f.payload), false)
		}
		return nil
	default:
		return fmt.Errorf("%w: unexpected %s frame from producer %s", ErrProtocol, f.typ, c.peer)
	}
}
