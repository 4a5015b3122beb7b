package netplane

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"sync"
	"sync/atomic"
	"time"

	"github.com/tidestream/tide/internal/clusterauth"
)

// handshakeTimeout bounds the HELLO exchange so a peer that accepts TCP but
// never answers cannot hang a caller.
const handshakeTimeout = 30 * time.Second

// Plane is one TaskManager's data plane: a TCP listener for channels whose
// consumer is here, dialed connections (one per remote plane) for channels
// whose producer is here, and in-process channels when both ends are here.
type Plane struct {
	opts     Options
	log      *slog.Logger
	ln       net.Listener
	addr     string
	pool     *bufferPool
	buffered atomic.Int64 // bytes held by all inputs
	done     chan struct{}
	wg       sync.WaitGroup // background goroutines; Add only under mu while open

	mu       sync.Mutex
	closed   bool
	inputs   map[ChannelID]*Input
	outputs  map[ChannelID]*Output
	dialed   map[string]*dialEntry
	accepted map[*conn]struct{}
	pending  map[net.Conn]struct{} // accepted sockets still in handshake
	released map[int64]struct{}
}

// dialEntry is an outbound connection, possibly still being dialed.
type dialEntry struct {
	done chan struct{} // closed when conn or err is set
	conn *conn
	err  error
}

// Listen starts a plane listening on addr ("127.0.0.1:0" picks a port).
func Listen(ctx context.Context, addr string, opts Options) (*Plane, error) {
	opts, err := opts.withDefaults()
	if err != nil {
		return nil, err
	}
	var lc net.ListenConfig
	ln, err := lc.Listen(ctx, "tcp", addr)
	if err != nil {
		return nil, fmt.Errorf("netplane: listen on %s: %w", addr, err)
	}
	if err := clusterauth.Require(ln.Addr(), opts.Secret, "the TaskManager's data plane (taskmanager.data.port on --host)"); err != nil {
		_ = ln.Close()
		return nil, fmt.Errorf("netplane: %w", err)
	}
	p := &Plane{
		opts:     opts,
		ln:       ln,
		addr:     ln.Addr().String(),
		pool:     newBufferPool(opts.BufferBytes),
		done:     make(chan struct{}),
		inputs:   make(map[ChannelID]*Input),
		outputs:  make(map[ChannelID]*Output),
		dialed:   make(map[string]*dialEntry),
		accepted: make(map[*conn]struct{}),
		pending:  make(map[net.Conn]struct{}),
		released: make(map[int64]struct{}),
	}
	p.log = opts.Logger.With("plane", p.addr)
	p.wg.Add(1)
	go p.acceptLoop()
	return p, nil
}

// BufferTimeout is the plane's execution.buffer-timeout: 0 when every record is sent at
// once, negative when only full buffers leave, else how long a partly filled buffer waits.
func (p *Plane) BufferTimeout() time.Duration { return p.opts.FlushInterval }

// Credits are the plane's receive buffers: per channel, and floating per input gate.
func (p *Plane) Credits() (perChannel, floatingPerGate int) {
	return p.opts.CreditsPerChannel, p.opts.FloatingBuffersPerGate
}

// Addr is the address peers dial to reach this plane.
func (p *Plane) Addr() string { return p.addr }

// BufferedBytes reports the bytes received by all inputs and not yet read.
// It never exceeds the open inputs' credits × BufferBytes (for each gate:
// channels × CreditsPerChannel + FloatingBuffersPerGate buffers), except for
// records larger than BufferBytes, which travel in oversized buffers.
func (p *Plane) BufferedBytes() int64 { return p.buffered.Load() }

// OpenInput returns the consuming end of id. It may be called before or after
// the producer connects; calling it again returns the same Input. For a
// released attempt or a closed plane the Input fails on first Next.
func (p *Plane) OpenInput(id ChannelID) *Input {
	p.mu.Lock()
	defer p.mu.Unlock()
	if in, ok := p.inputs[id]; ok {
		return in
	}
	in := newInput(p, id)
	if err := p.usableLocked(id); err != nil {
		in.err = err
		return in
	}
	p.inputs[id] = in
	return in
}

// OpenGateInput is OpenInput for a channel of an input gate of channels channels (a
// consumer subtask's channels from every producer of one edge): the channel may also hold
// its even share of the gate's FloatingBuffersPerGate buffers.
func (p *Plane) OpenGateInput(id ChannelID, channels int) *Input {
	in := p.OpenInput(id)
	if channels > 0 {
		in.raiseCredits(p.opts.CreditsPerChannel + p.opts.FloatingBuffersPerGate/channels)
	}
	return in
}

// OpenOutput returns the producing end of id, whose consumer lives on the
// plane at remoteAddr. When remoteAddr is this plane's own address the
// channel stays in process with the same batching and credit semantics.
func (p *Plane) OpenOutput(ctx context.Context, id ChannelID, remoteAddr string) (*Output, error) {
	p.mu.Lock()
	if err := p.usableLocked(id); err != nil {
		p.mu.Unlock()
		return nil, err
	}
	if _, dup := p.outputs[id]; dup {
		p.mu.Unlock()
		return nil, fmt.Errorf("netplane: channel %s: output already open", id)
	}
	o := newOutput(p, id)
	p.outputs[id] = o
	p.mu.Unlock()

	if remoteAddr == p.addr {
		in, err := p.attachProducer(id, localConsumerLink{out: o})
		if err != nil {
			p.forgetOutput(o)
			return nil, err
		}
		o.setLink(localProducerLink{in: in})
	} else {
		c, err := p.connTo(ctx, remoteAddr)
		if err == nil {
			err = c.addOutput(o)
		}
		if err != nil {
			p.forgetOutput(o)
			return nil, fmt.Errorf("netplane: open channel %s to %s: %w", id, remoteAddr, err)
		}
	}
	if err := o.failure(); err != nil { // released while opening: tell the consumer
		o.abort(err)
		p.forgetOutput(o)
		return nil, err
	}
	return o, nil
}

// ReleaseAttempt drops every channel of attempt, on both ends: blocked
// writers and readers return an error wrapping ErrReleased, remote peers are
// told, and channels of that attempt opened later fail at once.
func (p *Plane) ReleaseAttempt(attempt int64) {
	p.mu.Lock()
	if p.closed {
		p.mu.Unlock()
		return
	}
	p.released[attempt] = struct{}{}
	var outs []*Output
	var ins []*Input
	for id, o := range p.outputs {
		if id.Attempt == attempt {
			outs = append(outs, o)
			delete(p.outputs, id)
		}
	}
	for id, in := range p.inputs {
		if id.Attempt == attempt {
			ins = append(ins, in)
			delete(p.inputs, id)
		}
	}
	p.mu.Unlock()
	p.log.Debug("netplane released attempt", "attempt", attempt, "outputs", len(outs), "inputs", len(ins))
	for _, o := range outs {
		o.fail(fmt.Errorf("channel %s: %w (attempt %d)", o.id, ErrReleased, attempt), true)
	}
	for _, in := range ins {
		in.fail(fmt.Errorf("channel %s: %w (attempt %d)", in.id, ErrReleased, attempt), true)
	}
}

// Close fails every open channel with ErrPlaneClosed, writes frames already
// queued (such as end of stream) to peers, closes all connections and waits
// for the plane's goroutines.
func (p *Plane) Close() error {
	p.mu.Lock()
	if p.closed {
		p.mu.Unlock()
		return nil
	}
	p.closed = true
	outs, ins := p.outputs, p.inputs
	p.outputs, p.inputs = nil, nil
	var conns []*conn
	for _, d := range p.dialed {
		if d.conn != nil {
			conns = append(conns, d.conn)
		}
	}
	for c := range p.accepted {
		conns = append(conns, c)
	}
	for nc := range p.pending {
		_ = nc.Close()
	}
	p.mu.Unlock()

	close(p.done)
	err := p.ln.Close()
	if errors.Is(err, net.ErrClosed) {
		err = nil
	}
	for id, o := range outs {
		o.fail(fmt.Errorf("channel %s: %w", id, ErrPlaneClosed), false)
	}
	for id, in := range ins {
		in.fail(fmt.Errorf("channel %s: %w", id, ErrPlaneClosed), false)
	}
	for _, c := range conns {
		c.shutdown()
	}
	p.wg.Wait()
	if err != nil {
		return fmt.Errorf("netplane: close listener %s: %w", p.addr, err)
	}
	return nil
}

func (p *Plane) usableLocked(id ChannelID) error {
	if p.closed {
		return fmt.Errorf("channel %s: %w", id, ErrPlaneClosed)
	}
	if _, ok := p.released[id.Attempt]; ok {
		return fmt.Errorf("channel %s: %w (attempt %d)", id, ErrReleased, id.Attempt)
	}
	return nil
}

// attachProducer binds a producer to the input of id, creating the input if
// the consumer has not opened it yet.
func (p *Plane) attachProducer(id ChannelID, link consumerLink) (*Input, error) {
	p.mu.Lock()
	if err := p.usableLocked(id); err != nil {
		p.mu.Unlock()
		return nil, err
	}
	in, ok := p.inputs[id]
	if !ok {
		in = newInput(p, id)
		p.inputs[id] = in
	}
	p.mu.Unlock()
	if err := in.bind(link); err != nil {
		return nil, err
	}
	return in, nil
}

func (p *Plane) forgetOutput(o *Output) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.outputs[o.id] == o {
		delete(p.outputs, o.id)
	}
}

func (p *Plane) forgetConn(c *conn) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if d := p.dialed[c.key]; d != nil && d.conn == c {
		delete(p.dialed, c.key)
	}
	delete(p.accepted, c)
}

// connTo returns the connection to the plane at addr, dialing it once for
// all concurrent callers.
func (p *Plane) connTo(ctx context.Context, addr string) (*conn, error) {
	for {
		p.mu.Lock()
		if p.closed {
			p.mu.Unlock()
			return nil, ErrPlaneClosed
		}
		d := p.dialed[addr]
		if d == nil {
			d = &dialEntry{done: make(chan struct{})}
			p.dialed[addr] = d
			p.mu.Unlock()
			c, err := p.dial(ctx, addr)
			p.mu.Lock()
			d.conn, d.err = c, err
			if err != nil && p.dialed[addr] == d {
				delete(p.dialed, addr)
			}
			close(d.done)
			p.mu.Unlock()
			return c, err
		}
		p.mu.Unlock()
		select {
		case <-d.done:
		case <-ctx.Done():
			return nil, fmt.Errorf("waiting for connection to peer %s: %w", addr, ctx.Err())
		}
		if d.err == nil {
			return d.conn, nil
		}
		if errors.Is(d.err, context.Canceled) || errors.Is(d.err, context.DeadlineExceeded) {
			continue // the caller that dialed gave up; try with our own context
		}
		return nil, d.err
	}
}

// dial connects to a peer plane, exchanges HELLO and starts the connection's
// goroutines.
func (p *Plane) dial(ctx context.Context, addr string) (*conn, error) {
	var d net.Dialer
	nc, err := d.DialContext(ctx, "tcp", addr)
	if err != nil {
		return nil, fmt.Errorf("dial peer %s: %w", addr, err)
	}
	br := bufio.NewReaderSize(nc, readBufferBytes)
	if _, err := p.handshakePeer(ctx, nc, br, true); err != nil {
		_ = nc.Close()
		return nil, fmt.Errorf("handshake with peer %s: %w", addr, err)
	}
	c := newConn(p, nc, br, addr, true)
	c.key = addr
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.closed {
		_ = nc.Close()
		return nil, ErrPlaneClosed
	}
	p.wg.Add(2)
	go func() { defer p.wg.Done(); c.readLoop() }()
	go func() { defer p.wg.Done(); c.writeLoop() }()
	p.log.Debug("netplane connected", "peer", addr, "local", nc.LocalAddr().String())
	return c, nil
}

// readBufferBytes is the size of a connection's read buffer.
const readBufferBytes = 64 << 10

// handshakePeer exchanges HELLO frames, the dialer first, and returns the
// peer's listen address.
func (p *Plane) handshakePeer(ctx context.Context, nc net.Conn, br *bufio.Reader, dialer bool) (string, error) {
	deadline := time.Now().Add(handshakeTimeout)
	if d, ok := ctx.Deadline(); ok && d.Before(deadline) {
		deadline = d
	}
	_ = nc.SetDeadline(deadline)
	stop := context.AfterFunc(ctx, func() { _ = nc.SetDeadline(time.Unix(1, 0)) })
	defer func() {
		stop()
		_ = nc.SetDeadline(time.Time{})
	}()
	secret := p.opts.Secret
	var nonce []byte
	if secret.Set() {
		var err error
		if nonce, err = clusterauth.Nonce(helloNonceBytes); err != nil {
			return "", err
		}
	}
	bw := bufio.NewWriterSize(nc, 256)
	send := func(t frameType, payload []byte) error {
		if err := writeFrame(bw, t, 0, payload); err != nil {
			return err
		}
		return bw.Flush()
	}
	// refuse tells the peer why before the connection is dropped.
	refuse := func(reason string) error {
		_ = send(frameReset, resetReason(reason))
		return fmt.Errorf("%w: %s", ErrUnauthenticated, reason)
	}
	recv := func(want frameType) ([]byte, error) {
		f, err := readFrame(br, func(int) []byte { return nil })
		if err != nil {
			return nil, ctxErr(ctx, err)
		}
		if f.typ == frameReset {
			return nil, fmt.Errorf("%w: the peer refused the connection: %s", ErrUnauthenticated, f.payload)
		}
		if f.typ != want {
			return nil, fmt.Errorf("%w: expected %s, got %s", ErrProtocol, want, f.typ)
		}
		return f.payload, nil
	}
	own := appendHello(nil, hello{version: protocolVersion, nonce: nonce, addr: p.addr})
	if dialer {
		if err := send(frameHello, own); err != nil {
			return "", ctxErr(ctx, err)
		}
	}
	payload, err := recv(frameHello)
	if err != nil {
		return "", err
	}
	h, err := decodeHello(payload)
	if err != nil {
		return "", err
	}
	switch {
	case secret.Set() && h.nonce == nil:
		return "", refuse(fmt.Sprintf("the data plane at %s requires the internal secret and the peer %s has none: start every TaskManager with the same %s (or %s)",
			p.addr, h.addr, clusterauth.KeySecretFile, clusterauth.KeySecret))
	case !secret.Set() && h.nonce != nil:
		return "", refuse(fmt.Sprintf("the data plane at %s has no internal secret and the peer %s uses one: start every TaskManager with the same %s (or %s)",
			p.addr, h.addr, clusterauth.KeySecretFile, clusterauth.KeySecret))
	}
	if !dialer {
		if err := send(frameHello, own); err != nil {
			return "", err
		}
	}
	if !secret.Set() {
		return h.addr, nil
	}
	// Nonces in the order dialer, acceptor, so both sides compute the same messages.
	dn, an := nonce, h.nonce
	if !dialer {
		dn, an = h.nonce, nonce
	}
	if dialer {
		proof, err := recv(frameAuth)
		if err != nil {
			return "", err
		}
		if !secret.Verify(proof, "tide-data-acceptor", dn, an) {
			return "", refuse(fmt.Sprintf("the peer %s proved a different internal secret: start every TaskManager with the same %s (or %s)",
				h.addr, clusterauth.KeySecretFile, clusterauth.KeySecret))
		}
		if err := send(frameAuth, secret.Proof("tide-data-dialer", dn, an)); err != nil {
			return "", err
		}
		return h.addr, nil
	}
	if err := send(frameAuth, secret.Proof("tide-data-acceptor", dn, an)); err != nil {
		return "", err
	}
	proof, err := recv(frameAuth)
	if err != nil {
		return "", err
	}
	if !secret.Verify(proof, "tide-data-dialer", dn, an) {
		return "", refuse(fmt.Sprintf("the peer %s proved a different internal secret: start every TaskManager with the same %s (or %s)",
			h.addr, clusterauth.KeySecretFile, clusterauth.KeySecret))
	}
	return h.addr, nil
}

// ctxErr prefers the context's error when it caused err.
func ctxErr(ctx context.Context, err error) error {
	if ctx.Err() != nil {
		return fmt.Errorf("%w (%w)", ctx.Err(), err)
	}
	return err
}

func (p *Plane) acceptLoop() {
	defer p.wg.Done()
	for {
		nc, err := p.ln.Accept()
		if err != nil {
			select {
			case <-p.done:
			default:
				p.log.Error("netplane accept failed; no longer accepting peers", "err", err)
			}
			return
		}
		p.mu.Lock()
		if p.closed {
			p.mu.Unlock()
			_ = nc.Close()
			return
		}
		p.pending[nc] = struct{}{}
		p.wg.Add(1)
		p.mu.Unlock()
		go func() {
			defer p.wg.Done()
			p.serveInbound(nc)
		}()
	}
}

// serveInbound runs an accepted connection: handshake, then the reader in
// this goroutine and the writer in another. Close interrupts a handshake in
// progress by closing the pending socket.
func (p *Plane) serveInbound(nc net.Conn) {
	br := bufio.NewReaderSize(nc, readBufferBytes)
	peer, err := p.handshakePeer(context.Background(), nc, br, false)
	p.mu.Lock()
	delete(p.pending, nc)
	closed := p.closed
	p.mu.Unlock()
	if err != nil || closed {
		_ = nc.Close()
		if !closed {
			p.log.Warn("netplane rejected inbound connection", "remote", nc.RemoteAddr().String(), "err", err)
		}
		return
	}
	c := newConn(p, nc, br, peer, false)
	p.mu.Lock()
	if p.closed {
		p.mu.Unlock()
		_ = nc.Close()
		return
	}
	p.accepted[c] = struct{}{}
	p.wg.Add(1)
	p.mu.Unlock()
	go func() { defer p.wg.Done(); c.writeLoop() }()
	c.readLoop()
}

func (p *Plane) isClosed() bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.closed
}
