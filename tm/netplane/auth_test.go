package netplane

import (
	"bytes"
	"errors"
	"io"
	"log/slog"
	"strings"
	"sync"
	"testing"

	"github.com/tidestream/tide/internal/clusterauth"
)

// lockedLog collects a plane's log lines.
type lockedLog struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (l *lockedLog) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.buf.Write(p)
}

func (l *lockedLog) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.buf.String()
}

// TestDataPlaneAuthentication dials real planes over loopback with every combination of
// secrets: the same secret (or none on both sides) carries records; a missing or different
// secret on either side is refused, with an error on the dialing side and a log line on the
// accepting side that both name the secret's key.
func TestDataPlaneAuthentication(t *testing.T) {
	a := clusterauth.Secret("0123456789abcdef-secret-a")
	b := clusterauth.Secret("0123456789abcdef-secret-b")
	tests := []struct {
		name            string
		dialer, accepts clusterauth.Secret
		ok              bool
		dialErr         string
	}{
		{"no secret on loopback", nil, nil, true, ""},
		{"same secret", a, a, true, ""},
		{"dialer without the secret", nil, a, false, "requires the internal secret"},
		{"dialer with another secret", b, a, false, "proved a different internal secret"},
		{"acceptor without a secret", a, nil, false, "has no internal secret"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ctx := testCtx(t)
			logs := &lockedLog{}
			cons := newTestPlane(t, Options{Secret: tt.accepts, Logger: slog.New(slog.NewTextHandler(logs, nil))})
			prod := newTestPlane(t, Options{Secret: tt.dialer})
			id := chanID(1, 0, 0)
			in := cons.OpenInput(id)
			out, err := prod.OpenOutput(ctx, id, cons.Addr())
			if !tt.ok {
				if err == nil {
					t.Fatal("OpenOutput succeeded; want a refusal")
				}
				if !errors.Is(err, ErrUnauthenticated) || !strings.Contains(err.Error(), tt.dialErr) ||
					!strings.Contains(err.Error(), clusterauth.KeySecretFile) {
					t.Fatalf("OpenOutput error %q; want ErrUnauthenticated saying %q and naming %s", err, tt.dialErr, clusterauth.KeySecretFile)
				}
				waitFor(t, "the accepting side to log the refusal", func() bool {
					return strings.Contains(logs.String(), "netplane rejected inbound connection") &&
						strings.Contains(logs.String(), clusterauth.KeySecretFile)
				})
				return
			}
			if err != nil {
				t.Fatalf("OpenOutput: %v", err)
			}
			if err := out.Write(ctx, []byte("hello")); err != nil {
				t.Fatal(err)
			}
			if err := out.Close(ctx); err != nil {
				t.Fatal(err)
			}
			got, err := in.Next(ctx)
			if err != nil || string(got) != "hello" {
				t.Fatalf("Next = %q, %v", got, err)
			}
			if _, err := in.Next(ctx); !errors.Is(err, io.EOF) {
				t.Fatalf("Next after the record: %v", err)
			}
		})
	}
}

// TestDataPlaneOffLoopbackNeedsSecret: a plane listening on every interface refuses to start
// without the internal secret, and starts with one.
func TestDataPlaneOffLoopbackNeedsSecret(t *testing.T) {
	_, err := Listen(t.Context(), "0.0.0.0:0", Options{Logger: testLogger()})
	if !errors.Is(err, clusterauth.ErrSecretRequired) || !strings.Contains(err.Error(), clusterauth.KeySecretFile) {
		t.Fatalf("Listen on 0.0.0.0 without a secret = %v; want an error naming %s", err, clusterauth.KeySecretFile)
	}
	p, err := Listen(t.Context(), "0.0.0.0:0", Options{Logger: testLogger(), Secret: clusterauth.Secret("0123456789abcdef-secret")})
	if err != nil {
		t.Fatalf("Listen on 0.0.0.0 with a secret: %v", err)
	}
	if err := p.Close(); err != nil {
		t.Fatal(err)
	}
}
