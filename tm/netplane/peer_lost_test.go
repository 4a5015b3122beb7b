package netplane

import (
	"errors"
	"strings"
	"testing"
)

// TestPeerLost fails the connection while a writer is blocked on credit and
// a reader waits for data, and checks both get an error naming the peer.
func TestPeerLost(t *testing.T) {
	tests := []struct {
		name string
		// kill breaks the link between prod and cons.
		kill func(t *testing.T, prod, cons *Plane)
		// consumerAlive: the consuming plane survives and its reader must fail.
		consumerAlive bool
	}{
		{"consumer plane closes", func(t *testing.T, _, cons *Plane) {
			if err := cons.Close(); err != nil {
				t.Fatalf("Close: %v", err)
			}
		}, false},
		{"producer plane closes", func(t *testing.T, prod, _ *Plane) {
			if err := prod.Close(); err != nil {
				t.Fatalf("Close: %v", err)
			}
		}, true},
		{"socket dies under the consumer", func(t *testing.T, _, cons *Plane) {
			cons.mu.Lock()
			defer cons.mu.Unlock()
			for c := range cons.accepted {
				_ = c.nc.Close() // no goodbye: the reader finds out by itself
			}
		}, true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			ctx := testCtx(t)
			opts := Options{BufferBytes: 256, CreditsPerChannel: 1, FlushInterval: -1}
			prod, cons := newTestPlane(t, opts), newTestPlane(t, opts)
			full, idle := chanID(1, 0, 0), chanID(1, 1, 0)
			cons.OpenInput(full)
			idleIn := cons.OpenInput(idle)
			out, err := prod.OpenOutput(ctx, full, cons.Addr())
			if err != nil {
				t.Fatalf("OpenOutput: %v", err)
			}
			if _, err := prod.OpenOutput(ctx, idle, cons.Addr()); err != nil {
				t.Fatalf("OpenOutput: %v", err)
			}
			writeErr := make(chan error, 1)
			go func() {
				for n := 0; ; n++ {
					if err := out.Write(ctx, record(n, 60)); err != nil {
						writeErr <- err
						return
					}
				}
			}()
			readErr := make(chan error, 1)
			go func() {
				_, err := idleIn.Next(ctx)
				readErr <- err
			}()
			waitFor(t, "Write to block", out.BackPressured)
			// The producer may block on its first credit before the consumer has
			// read the idle channel's open frame; a socket closed then takes the
			// frame with it and the idle input never learns its producer (its task
			// is cancelled by the failover the producer's error starts). Kill only
			// once both inputs are bound, which is the case this test is about.
			waitFor(t, "the idle input to bind its producer", func() bool {
				idleIn.mu.Lock()
				defer idleIn.mu.Unlock()
				return idleIn.producer != nil
			})
			tc.kill(t, prod, cons)

			err = <-writeErr
			if !errors.Is(err, ErrPeerLost) && !errors.Is(err, ErrPlaneClosed) {
				t.Fatalf("blocked Write: got %v, want ErrPeerLost or ErrPlaneClosed", err)
			}
			if errors.Is(err, ErrPeerLost) && !strings.Contains(err.Error(), cons.Addr()) {
				t.Fatalf("blocked Write: error %q does not name the consumer %s", err, cons.Addr())
			}
			err = <-readErr
			if tc.consumerAlive {
				if !errors.Is(err, ErrPeerLost) || !strings.Contains(err.Error(), prod.Addr()) {
					t.Fatalf("blocked Next: got %v, want ErrPeerLost naming the producer %s", err, prod.Addr())
				}
			} else if !errors.Is(err, ErrPlaneClosed) {
				t.Fatalf("blocked Next on a closed plane: got %v, want ErrPlaneClosed", err)
			}
			if tc.consumerAlive {
				// A later channel to the same peer redials when the peer lives.
				prodAlive := !prod.isClosed()
				if prodAlive {
					id := chanID(2, 0, 0)
					in := cons.OpenInput(id)
					out, err := prod.OpenOutput(ctx, id, cons.Addr())
					if err != nil {
						t.Fatalf("OpenOutput after reconnect: %v", err)
					}
					if err := out.Write(ctx, []byte("again")); err != nil {
						t.Fatalf("Write: %v", err)
					}
					if err := out.Close(ctx); err != nil {
						t.Fatalf("Close: %v", err)
					}
					if got, err := in.Next(ctx); err != nil || string(got) != "again" {
						t.Fatalf("Next after reconnect: %q, %v", got, err)
					}
				}
			}
		})
	}
}

// TestDialFailures: an unreachable peer and a peer that never answers the
// handshake both fail OpenOutput within the caller's context.
func TestDialFailures(t *testing.T) {
	ctx := testCtx(t)
	p := newTestPlane(t, Options{})

	dead := newTestPlane(t, Options{})
	deadAddr := dead.Addr()
	if err := dead.Close(); err != nil {
		t.Fatal(err)
	}
	if _, err := p.OpenOutput(ctx, chanID(1, 0, 0), deadAddr); err == nil || !strings.Contains(err.Error(), deadAddr) {
		t.Fatalf("OpenOutput to a closed port: got %v, want an error naming %s", err, deadAddr)
	}

	silent := newSilentPeer(t)
	short, cancel := contextWithCancelAfterAccept(ctx, silent)
	defer cancel()
	_, err := p.OpenOutput(short, chanID(1, 0, 1), silent.addr())
	if err == nil || !strings.Contains(err.Error(), silent.addr()) {
		t.Fatalf("OpenOutput to a silent peer: got %v, want an error naming %s", err, silent.addr())
	}
	// The failed dial left nothing behind: the next attempt dials again.
	p.mu.Lock()
	entries := len(p.dialed)
	p.mu.Unlock()
	if entries != 0 {
		t.Fatalf("%d dial entries left after failures, want 0", entries)
	}
}
