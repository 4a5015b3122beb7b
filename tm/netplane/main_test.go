package netplane

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"testing"
	"time"

	"go.uber.org/goleak"
)

func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m)
}

// hangGuard only keeps a broken test from hanging; no test depends on it.
const hangGuard = 60 * time.Second

func testCtx(t *testing.T) context.Context {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), hangGuard)
	t.Cleanup(cancel)
	return ctx
}

func testLogger() *slog.Logger {
	return slog.New(slog.NewTextHandler(io.Discard, nil))
}

// newTestPlane starts a plane on loopback that is closed when the test ends.
func newTestPlane(t *testing.T, opts Options) *Plane {
	t.Helper()
	if opts.Logger == nil {
		opts.Logger = testLogger()
	}
	p, err := Listen(t.Context(), "127.0.0.1:0", opts)
	if err != nil {
		t.Fatalf("Listen: %v", err)
	}
	t.Cleanup(func() {
		if err := p.Close(); err != nil {
			t.Errorf("Close plane %s: %v", p.Addr(), err)
		}
	})
	return p
}

// pair returns the producer plane and the consumer plane for a mode: two
// planes over loopback TCP, or one plane for the in-process short-circuit.
func pair(t *testing.T, mode string, opts Options) (producer, consumer *Plane) {
	t.Helper()
	switch mode {
	case "tcp":
		return newTestPlane(t, opts), newTestPlane(t, opts)
	case "local":
		p := newTestPlane(t, opts)
		return p, p
	default:
		t.Fatalf("unknown mode %q", mode)
		return nil, nil
	}
}

var modes = []string{"tcp", "local"}

// waitFor polls cond; the deadline only prevents a hang.
func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(hangGuard)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("gave up waiting for %s", what)
		}
		time.Sleep(time.Millisecond)
	}
}

func chanID(attempt int64, producer, consumer int) ChannelID {
	return ChannelID{Attempt: attempt, Edge: "src->sink", Producer: producer, Consumer: consumer}
}

func record(n, size int) []byte {
	b := []byte(fmt.Sprintf("rec-%08d-", n))
	for len(b) < size {
		b = append(b, byte('a'+n%26))
	}
	return b[:max(size, 0)]
}
