package ipc

import (
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"sync"
	"sync/atomic"
	"time"

	"google.golang.org/protobuf/proto"

	"github.com/tidestream/tide/internal/hadoop/hadooppb"
	"github.com/tidestream/tide/internal/hadoop/security"
)

// ErrUnreachable is wrapped by errors from calls that could not connect to the server.
var ErrUnreachable = errors.New("server unreachable")

// ErrClosed is returned by calls on a closed Client.
var ErrClosed = errors.New("hadoop ipc: client closed")

// Config describes one protocol endpoint.
type Config struct {
	// Addr is the server's host:port.
	Addr string
	// Protocol is the Hadoop protocol name, e.g.
	// org.apache.hadoop.yarn.api.ApplicationClientProtocolPB.
	Protocol string
	// User is the effective user sent with SIMPLE authentication. Ignored with a Token.
	User string
	// Token, when set, authenticates with SASL TOKEN / DIGEST-MD5.
	Token *security.Token
	// Dial opens the TCP connection; nil means a net.Dialer.
	Dial func(ctx context.Context, network, addr string) (net.Conn, error)
	// Logger receives connection events; nil means slog.Default().
	Logger *slog.Logger
}

// Client calls one Hadoop IPC protocol on one server. It is safe for concurrent use: calls are
// multiplexed on one connection, which is opened on first use and again after it is lost.
type Client struct {
	cfg      Config
	clientID []byte
	nextID   atomic.Uint32
	log      *slog.Logger

	mu     sync.Mutex // guards conn, token, closed; held while dialling
	conn   *conn
	token  *security.Token
	closed bool
}

// New checks cfg and returns a Client; it does not connect yet.
func New(cfg Config) (*Client, error) {
	if cfg.Addr == "" {
		return nil, errors.New("hadoop ipc: no server address")
	}
	if cfg.Protocol == "" {
		return nil, fmt.Errorf("hadoop ipc: no protocol name for %s", cfg.Addr)
	}
	if cfg.Token == nil && cfg.User == "" {
		return nil, fmt.Errorf("hadoop ipc: %s: SIMPLE authentication needs a user name", cfg.Addr)
	}
	if cfg.Dial == nil {
		var d net.Dialer
		cfg.Dial = d.DialContext
	}
	log := cfg.Logger
	if log == nil {
		log = slog.Default()
	}
	id := make([]byte, 16)
	if _, err := rand.Read(id); err != nil {
		return nil, fmt.Errorf("hadoop ipc: generating a client id: %w", err)
	}
	c := &Client{cfg: cfg, clientID: id, log: log.With("ipc_addr", cfg.Addr, "ipc_protocol", cfg.Protocol)}
	if cfg.Token != nil {
		t := *cfg.Token
		c.token = &t
	}
	return c, nil
}

// Addr is the server address the client calls.
func (c *Client) Addr() string { return c.cfg.Addr }

// SetToken replaces the SASL token (e.g. a rolled AMRMToken). The current connection is
// closed; the next call reconnects with the new token.
func (c *Client) SetToken(tok security.Token) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.token = &tok
	if c.conn != nil {
		old := c.conn
		c.conn = nil
		go old.close()
	}
}

// Close closes the connection; later calls fail with ErrClosed.
func (c *Client) Close() error {
	c.mu.Lock()
	cn := c.conn
	c.conn = nil
	c.closed = true
	c.mu.Unlock()
	if cn != nil {
		cn.close()
	}
	return nil
}

// Call invokes method with req and decodes the reply into resp. It waits until the reply
// arrives, the connection is lost, or ctx is done. A call that could not be sent because the
// connection had gone is retried once on a new connection; a call lost after it was sent
// fails with ErrConnectionLost, since the server may have carried it out.
func (c *Client) Call(ctx context.Context, method string, req, resp proto.Message) error {
	frameFor := func(id int32) ([]byte, error) {
		return encodeFrame(
			requestHeader(id, c.clientID, 0),
			&hadooppb.RequestHeaderProto{
				MethodName:                 proto.String(method),
				DeclaringClassProtocolName: proto.String(c.cfg.Protocol),
				ClientProtocolVersion:      proto.Uint64(1),
			},
			req)
	}
	var lastErr error
	for attempt := 0; attempt < 2; attempt++ {
		cn, err := c.connection(ctx)
		if err != nil {
			return fmt.Errorf("%s %s: %w", c.cfg.Addr, method, err)
		}
		id := int32(c.nextID.Add(1)-1) & 0x7FFFFFFF
		frame, err := frameFor(id)
		if err != nil {
			return fmt.Errorf("%s %s: %w", c.cfg.Addr, method, err)
		}
		ch, err := cn.register(id)
		if err != nil {
			lastErr = err
			continue
		}
		if err := cn.write(ctx, frame); err != nil {
			cn.unregister(id)
			if ctx.Err() != nil {
				return fmt.Errorf("%s %s: %w", c.cfg.Addr, method, err)
			}
			lastErr = err
			continue
		}
		select {
		case r := <-ch:
			return c.finish(method, r, resp)
		case <-ctx.Done():
			cn.unregister(id)
			return fmt.Errorf("%s %s: waiting for the reply: %w", c.cfg.Addr, method, context.Cause(ctx))
		}
	}
	return fmt.Errorf("%s %s: %w", c.cfg.Addr, method, lastErr)
}

func (c *Client) finish(method string, r result, resp proto.Message) error {
	if r.err != nil {
		var re *RemoteError
		if errors.As(r.err, &re) {
			cp := *re
			cp.Method = method
			return &cp
		}
		return fmt.Errorf("%s %s: %w", c.cfg.Addr, method, r.err)
	}
	if r.header.GetStatus() != hadooppb.RpcResponseHeaderProto_SUCCESS {
		return remoteErrorFrom(r.header, method)
	}
	if err := proto.Unmarshal(r.payload, resp); err != nil {
		return fmt.Errorf("%s %s: decoding the %T reply: %w", c.cfg.Addr, method, resp, err)
	}
	return nil
}

// connection returns the live connection, dialling a new one when needed.
func (c *Client) connection(ctx context.Context) (*conn, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.closed {
		return nil, ErrClosed
	}
	if c.conn != nil && c.conn.alive() {
		return c.conn, nil
	}
	if c.conn != nil {
		c.log.Debug("hadoop ipc: reconnecting after the connection was lost")
		c.conn.close()
		c.conn = nil
	}
	cn, err := c.dial(ctx)
	if err != nil {
		return nil, err
	}
	c.conn = cn
	return cn, nil
}

// dial connects and runs the handshake: preamble, SASL when a token is set, connection context.
func (c *Client) dial(ctx context.Context) (*conn, error) {
	start := time.Now()
	nc, err := c.cfg.Dial(ctx, "tcp", c.cfg.Addr)
	if err != nil {
		return nil, fmt.Errorf("%w: connecting to %s: %w", ErrUnreachable, c.cfg.Addr, err)
	}
	if dl, ok := ctx.Deadline(); ok {
		_ = nc.SetDeadline(dl)
	}
	stop := context.AfterFunc(ctx, func() { _ = nc.SetDeadline(time.Now()) })
	err = c.handshake(nc)
	stopped := stop()
	if err == nil && !stopped {
		err = context.Cause(ctx)
	}
	if err != nil {
		_ = nc.Close()
		if ctx.Err() != nil {
			return nil, fmt.Errorf("handshake with %s: %w (%w)", c.cfg.Addr, context.Cause(ctx), err)
		}
		return nil, fmt.Errorf("handshake with %s: %w", c.cfg.Addr, err)
	}
	_ = nc.SetDeadline(time.Time{})
	c.log.Debug("hadoop ipc: connected", "sasl", c.token != nil, "took", time.Since(start))
	return newConn(nc, c.cfg.Addr), nil
}

func (c *Client) handshake(nc net.Conn) error {
	if _, err := nc.Write(preamble(c.token != nil)); err != nil {
		return fmt.Errorf("sending the preamble: %w", err)
	}
	user := &hadooppb.UserInformationProto{}
	if c.token != nil {
		if err := saslExchange(nc, *c.token); err != nil {
			return err
		}
	} else {
		user.EffectiveUser = proto.String(c.cfg.User)
	}
	frame, err := encodeFrame(requestHeader(callIDConnectionContext, c.clientID, -1), &hadooppb.IpcConnectionContextProto{
		UserInfo: user,
		Protocol: proto.String(c.cfg.Protocol),
	})
	if err != nil {
		return err
	}
	if _, err := nc.Write(frame); err != nil {
		return fmt.Errorf("sending the connection context: %w", err)
	}
	return nil
}
