package ipc

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"strings"
	"sync"
	"testing"
	"time"

	"google.golang.org/protobuf/proto"

	"github.com/tidestream/tide/internal/hadoop/hadooppb"
	"github.com/tidestream/tide/internal/hadoop/security"
	"github.com/tidestream/tide/yarn/yarnpb"
)

// fakeServer speaks the server side of Hadoop IPC well enough to test the client: it checks
// the preamble, runs the TOKEN/DIGEST-MD5 exchange when a token is configured, reads the
// connection context and answers calls through handle.
type fakeServer struct {
	t      *testing.T
	ln     net.Listener
	token  *security.Token // nil: SIMPLE
	handle func(method string, callID int32, req []byte, reply func(status hadooppb.RpcResponseHeaderProto_RpcStatusProto, class, msg string, resp proto.Message))

	mu       sync.Mutex
	contexts []*hadooppb.IpcConnectionContextProto
	initiate *hadooppb.RpcSaslProto
	conns    int
	wg       sync.WaitGroup
}

func startFakeServer(t *testing.T, token *security.Token) *fakeServer {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	s := &fakeServer{t: t, ln: ln, token: token}
	s.wg.Add(1)
	go s.accept()
	t.Cleanup(func() { _ = ln.Close(); s.wg.Wait() })
	return s
}

func (s *fakeServer) addr() string { return s.ln.Addr().String() }

func (s *fakeServer) accept() {
	defer s.wg.Done()
	for {
		nc, err := s.ln.Accept()
		if err != nil {
			return
		}
		s.mu.Lock()
		s.conns++
		s.mu.Unlock()
		s.wg.Add(1)
		go func() {
			defer s.wg.Done()
			defer nc.Close()
			if err := s.serve(nc); err != nil && !errors.Is(err, io.EOF) && !errors.Is(err, net.ErrClosed) {
				s.t.Errorf("fake server: %v", err)
			}
		}()
	}
}

func (s *fakeServer) writeResponse(w io.Writer, wmu *sync.Mutex, h *hadooppb.RpcResponseHeaderProto, payload proto.Message) error {
	msgs := []proto.Message{h}
	if payload != nil {
		msgs = append(msgs, payload)
	}
	frame, err := encodeFrame(msgs...)
	if err != nil {
		return err
	}
	wmu.Lock()
	defer wmu.Unlock()
	_, err = w.Write(frame)
	return err
}

func (s *fakeServer) readRequest(r io.Reader) (*hadooppb.RpcRequestHeaderProto, [][]byte, error) {
	body, err := readFrame(r)
	if err != nil {
		return nil, nil, err
	}
	parts, err := splitDelimited(body)
	if err != nil {
		return nil, nil, err
	}
	h := &hadooppb.RpcRequestHeaderProto{}
	if err := proto.Unmarshal(parts[0], h); err != nil {
		return nil, nil, err
	}
	if h.GetRpcKind() != hadooppb.RpcKindProto_RPC_PROTOCOL_BUFFER || h.RpcOp == nil {
		return nil, nil, fmt.Errorf("request header without rpcKind/rpcOp: %v", h)
	}
	return h, parts[1:], nil
}

func (s *fakeServer) serve(nc net.Conn) error {
	var wmu sync.Mutex
	pre := make([]byte, 7)
	if _, err := io.ReadFull(nc, pre); err != nil {
		return err
	}
	wantSASL := s.token != nil
	if !bytes.Equal(pre, preamble(wantSASL)) {
		return fmt.Errorf("preamble %x", pre)
	}
	ok := func(id int32) *hadooppb.RpcResponseHeaderProto {
		return &hadooppb.RpcResponseHeaderProto{CallId: proto.Uint32(uint32(id)), Status: hadooppb.RpcResponseHeaderProto_SUCCESS.Enum()}
	}
	if wantSASL {
		const nonce = "c2VydmVyLW5vbmNl"
		h, parts, err := s.readRequest(nc)
		if err != nil {
			return err
		}
		var m hadooppb.RpcSaslProto
		if err := proto.Unmarshal(parts[0], &m); err != nil || h.GetCallId() != callIDSASL || m.GetState() != hadooppb.RpcSaslProto_NEGOTIATE {
			return fmt.Errorf("want NEGOTIATE on call -33, got %v %v (%v)", h, &m, err)
		}
		challenge := `realm="default",nonce="` + nonce + `",qop="auth",charset=utf-8,algorithm=md5-sess`
		if err := s.writeResponse(nc, &wmu, ok(callIDSASL), &hadooppb.RpcSaslProto{
			State: hadooppb.RpcSaslProto_NEGOTIATE.Enum(),
			Auths: []*hadooppb.RpcSaslProto_SaslAuth{
				{Method: proto.String("KERBEROS"), Mechanism: proto.String("GSSAPI"), Protocol: proto.String("rm"), ServerId: proto.String("host")},
				{Method: proto.String("TOKEN"), Mechanism: proto.String("DIGEST-MD5"), Protocol: proto.String(""), ServerId: proto.String("default"), Challenge: []byte(challenge)},
			},
		}); err != nil {
			return err
		}
		h, parts, err = s.readRequest(nc)
		if err != nil {
			return err
		}
		if h.GetCallId() != callIDSASL {
			return fmt.Errorf("INITIATE on call %d, want %d", h.GetCallId(), callIDSASL)
		}
		init := &hadooppb.RpcSaslProto{}
		if err := proto.Unmarshal(parts[0], init); err != nil {
			return err
		}
		s.mu.Lock()
		s.initiate = init
		s.mu.Unlock()
		// Check the response exactly as Hadoop's SaslDigestCallbackHandler would.
		fields := map[string]string{}
		for _, kv := range strings.Split(string(init.GetToken()), ",") {
			k, v, _ := strings.Cut(kv, "=")
			fields[k] = strings.Trim(v, `"`)
		}
		user, pw := b64(s.token.Identifier), b64(s.token.Password)
		want := digestResponse(user, "default", pw, nonce, fields["cnonce"], "00000001", "auth", "AUTHENTICATE:/default")
		if fields["username"] != user || fields["response"] != want || fields["digest-uri"] != "/default" {
			return s.writeResponse(nc, &wmu, &hadooppb.RpcResponseHeaderProto{
				CallId: proto.Uint32(uint32(int64(callIDAuthorizationFailed) & 0xFFFFFFFF)), Status: hadooppb.RpcResponseHeaderProto_FATAL.Enum(),
				ExceptionClassName: proto.String("javax.security.sasl.SaslException"), ErrorMsg: proto.String("DIGEST-MD5: digest response format violation"),
				ErrorDetail: hadooppb.RpcResponseHeaderProto_FATAL_UNAUTHORIZED.Enum(),
			}, nil)
		}
		rsp := digestResponse(user, "default", pw, nonce, fields["cnonce"], "00000001", "auth", ":/default")
		if err := s.writeResponse(nc, &wmu, ok(callIDSASL), &hadooppb.RpcSaslProto{State: hadooppb.RpcSaslProto_SUCCESS.Enum(), Token: []byte("rspauth=" + rsp)}); err != nil {
			return err
		}
	}
	h, parts, err := s.readRequest(nc)
	if err != nil {
		return err
	}
	if h.GetCallId() != callIDConnectionContext {
		return fmt.Errorf("want the connection context (call -3), got call %d", h.GetCallId())
	}
	cc := &hadooppb.IpcConnectionContextProto{}
	if err := proto.Unmarshal(parts[0], cc); err != nil {
		return err
	}
	s.mu.Lock()
	s.contexts = append(s.contexts, cc)
	s.mu.Unlock()
	for {
		h, parts, err := s.readRequest(nc)
		if err != nil {
			return err
		}
		rh := &hadooppb.RequestHeaderProto{}
		if err := proto.Unmarshal(parts[0], rh); err != nil {
			return err
		}
		id := h.GetCallId()
		var req []byte
		if len(parts) > 1 {
			req = parts[1]
		}
		s.handle(rh.GetMethodName(), id, req, func(status hadooppb.RpcResponseHeaderProto_RpcStatusProto, class, msg string, resp proto.Message) {
			hdr := ok(id)
			hdr.Status = status.Enum()
			if status != hadooppb.RpcResponseHeaderProto_SUCCESS {
				hdr.ExceptionClassName, hdr.ErrorMsg = proto.String(class), proto.String(msg)
				resp = nil
			}
			if err := s.writeResponse(nc, &wmu, hdr, resp); err != nil {
				s.t.Logf("fake server: reply to %d: %v", id, err)
			}
			if status == hadooppb.RpcResponseHeaderProto_FATAL {
				_ = nc.Close()
			}
		})
	}
}

var testToken = security.Token{Identifier: []byte("appattempt-id-bytes"), Password: []byte{1, 2, 3, 250}, Kind: "YARN_AM_RM_TOKEN"}

func newTestClient(t *testing.T, s *fakeServer, tok *security.Token) *Client {
	t.Helper()
	c, err := New(Config{Addr: s.addr(), Protocol: "test.Protocol", User: "alice", Token: tok})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = c.Close() })
	return c
}

// echo answers GetApplicationReport with the id it was asked for.
func echo(method string, _ int32, req []byte, reply func(hadooppb.RpcResponseHeaderProto_RpcStatusProto, string, string, proto.Message)) {
	var r yarnpb.GetApplicationReportRequestProto
	_ = proto.Unmarshal(req, &r)
	reply(hadooppb.RpcResponseHeaderProto_SUCCESS, "", "", &yarnpb.GetApplicationReportResponseProto{
		ApplicationReport: &yarnpb.ApplicationReportProto{ApplicationId: r.ApplicationId, Name: proto.String(method)},
	})
}

func callEcho(ctx context.Context, c *Client, id int32) (*yarnpb.ApplicationReportProto, error) {
	var resp yarnpb.GetApplicationReportResponseProto
	err := c.Call(ctx, "getApplicationReport", &yarnpb.GetApplicationReportRequestProto{ApplicationId: &yarnpb.ApplicationIdProto{Id: proto.Int32(id)}}, &resp)
	return resp.GetApplicationReport(), err
}

func TestClientSimpleAuth(t *testing.T) {
	s := startFakeServer(t, nil)
	s.handle = echo
	c := newTestClient(t, s, nil)
	r, err := callEcho(context.Background(), c, 42)
	if err != nil {
		t.Fatal(err)
	}
	if r.GetApplicationId().GetId() != 42 || r.GetName() != "getApplicationReport" {
		t.Errorf("reply %v", r)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	cc := s.contexts[0]
	if cc.GetUserInfo().GetEffectiveUser() != "alice" || cc.GetProtocol() != "test.Protocol" {
		t.Errorf("connection context %v", cc)
	}
	_ = c.Close()
}

func TestClientTokenAuth(t *testing.T) {
	tok := testToken
	s := startFakeServer(t, &tok)
	s.handle = echo
	c := newTestClient(t, s, &tok)
	if _, err := callEcho(context.Background(), c, 1); err != nil {
		t.Fatal(err)
	}
	s.mu.Lock()
	init, cc := s.initiate, s.contexts[0]
	s.mu.Unlock()
	// INITIATE carries exactly the advertised TOKEN auth, protocol present but empty, no challenge.
	if len(init.GetAuths()) != 1 {
		t.Fatalf("INITIATE auths = %v", init.GetAuths())
	}
	a := init.GetAuths()[0]
	if a.GetMethod() != "TOKEN" || a.GetMechanism() != "DIGEST-MD5" || a.Protocol == nil || a.GetProtocol() != "" || a.GetServerId() != "default" || a.Challenge != nil {
		t.Errorf("INITIATE auth = %v", a)
	}
	if init.GetState() != hadooppb.RpcSaslProto_INITIATE {
		t.Errorf("state %v", init.GetState())
	}
	// On a token connection the user comes from the token: no effective user.
	if cc.GetUserInfo() == nil || cc.GetUserInfo().EffectiveUser != nil {
		t.Errorf("token connection context user = %v", cc.GetUserInfo())
	}
	_ = c.Close()
}

func TestClientWrongTokenIsFatal(t *testing.T) {
	tok := testToken
	s := startFakeServer(t, &tok)
	s.handle = echo
	wrong := testToken
	wrong.Password = []byte("not the password")
	c := newTestClient(t, s, &wrong)
	_, err := callEcho(context.Background(), c, 1)
	var re *RemoteError
	if !errors.As(err, &re) || !re.Fatal || re.Detail != hadooppb.RpcResponseHeaderProto_FATAL_UNAUTHORIZED || re.Class != "javax.security.sasl.SaslException" {
		t.Fatalf("err = %v, want a fatal SaslException", err)
	}
	_ = c.Close()
}

func TestClientMultiplexesOutOfOrderReplies(t *testing.T) {
	s := startFakeServer(t, nil)
	const n = 8
	var mu sync.Mutex
	var held []func()
	// Hold every reply until all n calls have arrived, then answer them in reverse order.
	s.handle = func(method string, id int32, req []byte, reply func(hadooppb.RpcResponseHeaderProto_RpcStatusProto, string, string, proto.Message)) {
		mu.Lock()
		held = append(held, func() { echo(method, id, req, reply) })
		if len(held) == n {
			for i := len(held) - 1; i >= 0; i-- {
				held[i]()
			}
		}
		mu.Unlock()
	}
	c := newTestClient(t, s, nil)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	var wg sync.WaitGroup
	errs := make(chan error, n)
	for i := 0; i < n; i++ {
		wg.Add(1)
		go func(i int32) {
			defer wg.Done()
			r, err := callEcho(ctx, c, i)
			if err == nil && r.GetApplicationId().GetId() != i {
				err = fmt.Errorf("call %d got the reply for %d", i, r.GetApplicationId().GetId())
			}
			errs <- err
		}(int32(i))
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			t.Error(err)
		}
	}
	s.mu.Lock()
	conns := s.conns
	s.mu.Unlock()
	if conns != 1 {
		t.Errorf("%d connections, want all calls on one", conns)
	}
	_ = c.Close()
}

func TestClientRemoteErrorKeepsConnection(t *testing.T) {
	s := startFakeServer(t, nil)
	calls := 0
	s.handle = func(method string, id int32, req []byte, reply func(hadooppb.RpcResponseHeaderProto_RpcStatusProto, string, string, proto.Message)) {
		calls++
		if calls == 1 {
			reply(hadooppb.RpcResponseHeaderProto_ERROR, "org.apache.hadoop.yarn.exceptions.ApplicationNotFoundException", "Application with id 'application_1_0001' doesn't exist in RM.", nil)
			return
		}
		echo(method, id, req, reply)
	}
	c := newTestClient(t, s, nil)
	_, err := callEcho(context.Background(), c, 1)
	if !IsRemoteClass(err, "org.apache.hadoop.yarn.exceptions.ApplicationNotFoundException") {
		t.Fatalf("err = %v", err)
	}
	var re *RemoteError
	if !errors.As(err, &re) || re.Fatal || re.Method != "getApplicationReport" || !strings.Contains(re.Message, "doesn't exist") {
		t.Errorf("remote error = %#v", re)
	}
	if _, err := callEcho(context.Background(), c, 2); err != nil {
		t.Fatal(err)
	}
	if s.conns != 1 {
		t.Errorf("%d connections after an ERROR reply, want 1", s.conns)
	}
	_ = c.Close()
}

func TestClientReconnectsAfterFatalAndEOF(t *testing.T) {
	s := startFakeServer(t, nil)
	calls := 0
	s.handle = func(method string, id int32, req []byte, reply func(hadooppb.RpcResponseHeaderProto_RpcStatusProto, string, string, proto.Message)) {
		calls++
		if calls == 1 {
			reply(hadooppb.RpcResponseHeaderProto_FATAL, "org.apache.hadoop.ipc.RpcServerException", "going away", nil)
			return
		}
		echo(method, id, req, reply)
	}
	c := newTestClient(t, s, nil)
	_, err := callEcho(context.Background(), c, 1)
	var re *RemoteError
	if !errors.As(err, &re) || !re.Fatal {
		t.Fatalf("first call: %v, want a fatal remote error", err)
	}
	r, err := callEcho(context.Background(), c, 2)
	if err != nil || r.GetApplicationId().GetId() != 2 {
		t.Fatalf("call after the fatal error: %v %v", r, err)
	}
	s.mu.Lock()
	conns := s.conns
	s.mu.Unlock()
	if conns != 2 {
		t.Errorf("%d connections, want a reconnect", conns)
	}
	_ = c.Close()
}

func TestClientContextDeadline(t *testing.T) {
	s := startFakeServer(t, nil)
	s.handle = func(string, int32, []byte, func(hadooppb.RpcResponseHeaderProto_RpcStatusProto, string, string, proto.Message)) {
		// never answers
	}
	c := newTestClient(t, s, nil)
	ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancel()
	_, err := callEcho(ctx, c, 1)
	if !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("err = %v, want DeadlineExceeded", err)
	}
	_ = c.Close()
	if _, err := callEcho(context.Background(), c, 1); !errors.Is(err, ErrClosed) {
		t.Errorf("call after Close: %v, want ErrClosed", err)
	}
}

func TestClientUnreachable(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	_ = ln.Close()
	c, err := New(Config{Addr: addr, Protocol: "p", User: "u"})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	_, err = callEcho(context.Background(), c, 1)
	if !errors.Is(err, ErrUnreachable) || !strings.Contains(err.Error(), addr) {
		t.Fatalf("err = %v, want ErrUnreachable naming %s", err, addr)
	}
}

func TestNewRejectsBadConfig(t *testing.T) {
	for _, cfg := range []Config{{Protocol: "p", User: "u"}, {Addr: "a:1", User: "u"}, {Addr: "a:1", Protocol: "p"}} {
		if _, err := New(cfg); err == nil {
			t.Errorf("New(%+v) succeeded", cfg)
		}
	}
}
