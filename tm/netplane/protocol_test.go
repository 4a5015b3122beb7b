package netplane

import (
	"bufio"
	"errors"
	"io"
	"net"
	"testing"
	"time"
)

// rawPeer is a hand-driven producer speaking the wire protocol directly.
type rawPeer struct {
	t  *testing.T
	nc net.Conn
	br *bufio.Reader
	bw *bufio.Writer
}

func dialRaw(t *testing.T, addr string) *rawPeer {
	t.Helper()
	nc, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = nc.Close() })
	_ = nc.SetDeadline(time.Now().Add(hangGuard))
	return &rawPeer{t: t, nc: nc, br: bufio.NewReader(nc), bw: bufio.NewWriter(nc)}
}

func (r *rawPeer) send(typ frameType, stream uint32, payload []byte) {
	r.t.Helper()
	if err := writeFrame(r.bw, typ, stream, payload); err != nil {
		r.t.Fatal(err)
	}
	if err := r.bw.Flush(); err != nil {
		r.t.Fatal(err)
	}
}

func (r *rawPeer) recv() (frame, error) {
	return readFrame(r.br, func(n int) []byte { return make([]byte, n) })
}

func (r *rawPeer) hello() {
	r.t.Helper()
	r.send(frameHello, 0, appendHello(nil, hello{version: protocolVersion, addr: "raw-peer:1"}))
	f, err := r.recv()
	if err != nil || f.typ != frameHello {
		r.t.Fatalf("handshake: got %v, %v", f.typ, err)
	}
}

func TestProtocolViolations(t *testing.T) {
	id := chanID(1, 0, 0)
	open, err := appendChannelID(nil, id)
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name string
		// script runs after the handshake; it returns when the plane has reacted.
		script func(t *testing.T, r *rawPeer, p *Plane)
	}{
		{"data beyond credit resets the channel", func(t *testing.T, r *rawPeer, p *Plane) {
			r.send(frameOpen, 1, open)
			f, err := r.recv()
			if err != nil || f.typ != frameCredit {
				t.Fatalf("expected CREDIT, got %v, %v", f.typ, err)
			}
			granted, _ := decodeCredit(f.payload)
			buf := appendRecord(nil, []byte("x"))
			for range granted + 1 {
				r.send(frameData, 1, buf)
			}
			for {
				f, err := r.recv()
				if err != nil {
					t.Fatalf("expected RESET, got %v", err)
				}
				if f.typ == frameReset {
					break
				}
			}
			if _, err := p.OpenInput(id).Next(t.Context()); !errors.Is(err, ErrProtocol) {
				t.Fatalf("Next: got %v, want ErrProtocol", err)
			}
		}},
		{"corrupt record fails the reader and resets the producer", func(t *testing.T, r *rawPeer, p *Plane) {
			r.send(frameOpen, 1, open)
			if f, err := r.recv(); err != nil || f.typ != frameCredit {
				t.Fatalf("expected CREDIT, got %v, %v", f.typ, err)
			}
			r.send(frameData, 1, []byte{0x7f, 'a'}) // claims 127 bytes, holds 1
			in := p.OpenInput(id)
			if _, err := in.Next(t.Context()); !errors.Is(err, ErrProtocol) {
				t.Fatalf("Next: got %v, want ErrProtocol", err)
			}
			if f, err := r.recv(); err != nil || f.typ != frameReset {
				t.Fatalf("expected RESET, got %v, %v", f.typ, err)
			}
		}},
		{"unknown frame type closes the connection", func(t *testing.T, r *rawPeer, _ *Plane) {
			r.send(frameType(99), 0, nil)
			if _, err := r.recv(); !errors.Is(err, io.EOF) && !isConnReset(err) {
				t.Fatalf("expected the plane to hang up, got %v", err)
			}
		}},
		{"credit from a producer closes the connection", func(t *testing.T, r *rawPeer, _ *Plane) {
			r.send(frameCredit, 1, appendCredit(nil, 1))
			if _, err := r.recv(); !errors.Is(err, io.EOF) && !isConnReset(err) {
				t.Fatalf("expected the plane to hang up, got %v", err)
			}
		}},
		{"second OPEN on a stream closes the connection", func(t *testing.T, r *rawPeer, p *Plane) {
			in := p.OpenInput(id)
			r.send(frameOpen, 1, open)
			r.send(frameOpen, 1, open)
			for {
				if _, err := r.recv(); err != nil {
					break
				}
			}
			if _, err := in.Next(t.Context()); !errors.Is(err, ErrPeerLost) {
				t.Fatalf("Next: got %v, want ErrPeerLost", err)
			}
		}},
		{"second producer for a channel is refused", func(t *testing.T, r *rawPeer, _ *Plane) {
			r.send(frameOpen, 1, open)
			r.send(frameOpen, 2, open)
			for {
				f, err := r.recv()
				if err != nil {
					t.Fatalf("expected RESET of stream 2, got %v", err)
				}
				if f.typ == frameReset && f.stream == 2 {
					return
				}
			}
		}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			p := newTestPlane(t, Options{})
			r := dialRaw(t, p.Addr())
			r.hello()
			tc.script(t, r, p)
		})
	}
}

func TestHandshakeRejections(t *testing.T) {
	tests := []struct {
		name  string
		first []byte
	}{
		{"not a hello", appendHeader(nil, frameData, 0, 0)},
		{"wrong magic", append(appendHeader(nil, frameHello, 0, 8), "NOTTIDE!"...)},
		{"wrong version", func() []byte {
			pl := appendHello(nil, hello{version: protocolVersion + 1, addr: "x"})
			return append(appendHeader(nil, frameHello, 0, len(pl)), pl...)
		}()},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			p := newTestPlane(t, Options{})
			r := dialRaw(t, p.Addr())
			if _, err := r.nc.Write(tc.first); err != nil {
				t.Fatal(err)
			}
			if _, err := r.recv(); !errors.Is(err, io.EOF) && !isConnReset(err) {
				t.Fatalf("expected the plane to hang up, got %v", err)
			}
		})
	}
}

func isConnReset(err error) bool {
	var op *net.OpError
	return errors.As(err, &op)
}
