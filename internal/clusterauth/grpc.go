package clusterauth

import (
	"context"
	"encoding/hex"
	"fmt"
	"log/slog"
	"strconv"
	"strings"
	"sync"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/peer"
	"google.golang.org/grpc/status"
)

// Metadata keys of the gRPC handshake.
const (
	mdClientProof = "tide-auth"       // v1:<unix ms>:<nonce hex>:<proof hex>
	mdServerProof = "tide-auth-proof" // <proof hex>
	labelClient   = "tide-rpc-client"
	labelServer   = "tide-rpc-server"
	nonceBytes    = 16
	// ProofWindow is how far a client's clock may be from the server's.
	ProofWindow = 5 * time.Minute
)

// ServerAuth checks the proof of every incoming gRPC call and answers with its own.
type ServerAuth struct {
	secret Secret
	log    *slog.Logger
	now    func() time.Time
	mu     sync.Mutex
	seen   map[string]time.Time // nonces within ProofWindow, against replays
}

// NewServerAuth returns the server side for secret (which must be set).
func NewServerAuth(secret Secret, log *slog.Logger) *ServerAuth {
	if log == nil {
		log = slog.Default()
	}
	return &ServerAuth{secret: secret, log: log, now: time.Now, seen: map[string]time.Time{}}
}

// ServerOptions are the grpc.ServerOptions that make a server require the secret.
func (a *ServerAuth) ServerOptions() []grpc.ServerOption {
	return []grpc.ServerOption{grpc.StreamInterceptor(a.stream), grpc.UnaryInterceptor(a.unary)}
}

func (a *ServerAuth) stream(srv any, ss grpc.ServerStream, info *grpc.StreamServerInfo, h grpc.StreamHandler) error {
	nonce, err := a.check(ss.Context(), info.FullMethod)
	if err != nil {
		return err
	}
	// Set, not sent: the proof goes out with the stream's headers, whenever the handler
	// sends them (the AM's Connect sends them before it reads anything).
	if err := ss.SetHeader(metadata.Pairs(mdServerProof, hex.EncodeToString(a.secret.Proof(labelServer, nonce)))); err != nil {
		return err
	}
	return h(srv, ss)
}

func (a *ServerAuth) unary(ctx context.Context, req any, info *grpc.UnaryServerInfo, h grpc.UnaryHandler) (any, error) {
	nonce, err := a.check(ctx, info.FullMethod)
	if err != nil {
		return nil, err
	}
	if err := grpc.SetHeader(ctx, metadata.Pairs(mdServerProof, hex.EncodeToString(a.secret.Proof(labelServer, nonce)))); err != nil {
		return nil, err
	}
	return h(ctx, req)
}

// check verifies the client's proof and returns its nonce, or an Unauthenticated status that
// says what is wrong; every refusal is logged with the peer's address.
func (a *ServerAuth) check(ctx context.Context, method string) ([]byte, error) {
	nonce, reason := a.verify(ctx)
	if reason == "" {
		return nonce, nil
	}
	remote := "unknown"
	if p, ok := peer.FromContext(ctx); ok && p.Addr != nil {
		remote = p.Addr.String()
	}
	a.log.Warn("refusing an unauthenticated TaskManager connection", "remote", remote, "method", method, "reason", reason)
	return nil, status.Error(codes.Unauthenticated, "the AM refused the connection: "+reason)
}

func (a *ServerAuth) verify(ctx context.Context) ([]byte, string) {
	md, _ := metadata.FromIncomingContext(ctx)
	vals := md.Get(mdClientProof)
	if len(vals) == 0 {
		return nil, fmt.Sprintf("it requires the internal secret and the TaskManager sent no proof of it: give the TaskManager the AM's %s (or %s, $%s)",
			KeySecretFile, KeySecret, EnvSecret)
	}
	parts := strings.Split(vals[0], ":")
	if len(parts) != 4 || parts[0] != "v1" {
		return nil, "the TaskManager's proof of the internal secret is malformed (a different tide version?)"
	}
	ms, err1 := strconv.ParseInt(parts[1], 10, 64)
	nonce, err2 := hex.DecodeString(parts[2])
	proof, err3 := hex.DecodeString(parts[3])
	if err1 != nil || err2 != nil || err3 != nil || len(nonce) != nonceBytes {
		return nil, "the TaskManager's proof of the internal secret is malformed (a different tide version?)"
	}
	if !a.secret.Verify(proof, labelClient, []byte(parts[1]), nonce) {
		return nil, fmt.Sprintf("the TaskManager's proof does not match the AM's internal secret: both must be started with the same %s (or %s, $%s)",
			KeySecretFile, KeySecret, EnvSecret)
	}
	now := a.now()
	at := time.UnixMilli(ms)
	if d := now.Sub(at); d > ProofWindow || d < -ProofWindow {
		return nil, fmt.Sprintf("the TaskManager's proof was made at %s, %s from the AM's clock (more than %s): synchronise the clocks",
			at.UTC().Format(time.RFC3339), d.Round(time.Second), ProofWindow)
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	for k, t := range a.seen {
		if now.Sub(t) > 2*ProofWindow {
			delete(a.seen, k)
		}
	}
	key := string(nonce)
	if _, dup := a.seen[key]; dup {
		return nil, "the TaskManager's proof was already used (a replayed connection)"
	}
	a.seen[key] = now
	return nonce, ""
}

// ClientProof is what a client attaches to one call, and what it checks the answer with.
type ClientProof struct {
	secret Secret
	nonce  []byte
	md     metadata.MD
}

// NewClientProof makes a fresh proof of secret for one call; nil when secret is not set.
func NewClientProof(secret Secret) (*ClientProof, error) {
	if !secret.Set() {
		return nil, nil
	}
	nonce, err := Nonce(nonceBytes)
	if err != nil {
		return nil, err
	}
	ms := strconv.FormatInt(time.Now().UnixMilli(), 10)
	v := "v1:" + ms + ":" + hex.EncodeToString(nonce) + ":" + hex.EncodeToString(secret.Proof(labelClient, []byte(ms), nonce))
	return &ClientProof{secret: secret, nonce: nonce, md: metadata.Pairs(mdClientProof, v)}, nil
}

// Context attaches the proof to ctx's outgoing metadata; a nil proof leaves ctx alone.
func (p *ClientProof) Context(ctx context.Context) context.Context {
	if p == nil {
		return ctx
	}
	return metadata.NewOutgoingContext(ctx, metadata.Join(p.md, outgoing(ctx)))
}

func outgoing(ctx context.Context) metadata.MD {
	md, _ := metadata.FromOutgoingContext(ctx)
	return md
}

// CheckServer verifies the server's answer header: with a secret, the server must prove it
// holds the same one. A nil proof accepts any server.
func (p *ClientProof) CheckServer(header metadata.MD, server string) error {
	if p == nil {
		return nil
	}
	vals := header.Get(mdServerProof)
	if len(vals) == 0 {
		return fmt.Errorf("the AM at %s did not prove it holds the internal secret: it runs without %s/%s, or it is not the job's AM", server, KeySecretFile, KeySecret)
	}
	proof, err := hex.DecodeString(vals[0])
	if err != nil || !p.secret.Verify(proof, labelServer, p.nonce) {
		return fmt.Errorf("the AM at %s answered with a proof that does not match this TaskManager's internal secret: both must use the same %s (or %s)", server, KeySecretFile, KeySecret)
	}
	return nil
}

// IsUnauthenticated reports whether err is the server's refusal of the proof.
func IsUnauthenticated(err error) bool {
	return status.Code(err) == codes.Unauthenticated
}
