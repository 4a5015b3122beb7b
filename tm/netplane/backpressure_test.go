package netplane

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"testing"
)

// TestBackpressureBoundsMemory: a consumer that stops reading blocks its
// producer after a bounded number of buffers, and the consumer never holds
// more than its credits × BufferBytes: CreditsPerChannel, plus an even share of
// FloatingBuffersPerGate for a channel of a gate (OpenGateInput), also when the
// gate opens after the producer attached. Once it reads again, every record
// arrives in order.
func TestBackpressureBoundsMemory(t *testing.T) {
	const (
		bufferBytes = 1024
		recordBytes = 100
		total       = 5000 // far more than credits can absorb
	)
	perBuffer := bufferBytes / recordLen(recordBytes) // records that fit in one buffer
	tests := []struct {
		name               string
		perChannel, floats int
		gate               int  // OpenGateInput with this many channels (0: OpenInput)
		late               bool // the gate opens once the producer blocked on its first credits
		credits            int  // buffers the consumer may hold
	}{
		{name: "credits=1", perChannel: 1, credits: 1},
		{name: "credits=3", perChannel: 3, credits: 3},
		{name: "gate of 2 shares 8 floating", perChannel: 1, floats: 8, gate: 2, credits: 5},
		{name: "gate of 9 has no share", perChannel: 2, floats: 8, gate: 9, credits: 2},
		{name: "no floating buffers", perChannel: 2, floats: -1, gate: 2, credits: 2},
		{name: "gate opened after the producer", perChannel: 1, floats: 6, gate: 3, late: true, credits: 3},
	}
	for _, tc := range tests {
		for _, mode := range modes {
			t.Run(fmt.Sprintf("%s/%s", mode, tc.name), func(t *testing.T) {
				ctx := testCtx(t)
				opts := Options{BufferBytes: bufferBytes, CreditsPerChannel: tc.perChannel, FloatingBuffersPerGate: tc.floats, FlushInterval: -1}
				prod, cons := pair(t, mode, opts)
				id := chanID(1, 0, 0)
				var in *Input
				switch {
				case tc.gate == 0:
					in = cons.OpenInput(id)
				case !tc.late:
					in = cons.OpenGateInput(id, tc.gate)
				}
				out, err := prod.OpenOutput(ctx, id, cons.Addr())
				if err != nil {
					t.Fatalf("OpenOutput: %v", err)
				}
				written := make(chan int, total)
				errc := make(chan error, 1)
				go func() {
					for n := range total {
						if err := out.Write(ctx, record(n, recordBytes)); err != nil {
							errc <- err
							return
						}
						written <- n
					}
					errc <- out.Close(ctx)
				}()

				credits := tc.credits
				if tc.late {
					waitFor(t, "the producer to block on its first credits", out.BackPressured)
					in = cons.OpenGateInput(id, tc.gate)
				}
				limit := int64(credits * bufferBytes)
				waitFor(t, "the producer to block with the consumer's buffers full", func() bool {
					in.mu.Lock()
					full := len(in.queue) == credits
					in.mu.Unlock()
					return full && out.BackPressured()
				})
				// While it is blocked, its back-pressured time grows.
				blocked := out.BackPressuredTime()
				waitFor(t, "the back-pressured time to grow while the producer is blocked", func() bool {
					return out.BackPressuredTime() > blocked
				})
				// The producer is blocked: credits buffers sit at the consumer
				// and one more is being filled; nothing else was accepted.
				accepted := len(written)
				if maxAccepted := (credits + 1) * perBuffer; accepted > maxAccepted {
					t.Fatalf("producer accepted %d records while the consumer read none, want at most %d", accepted, maxAccepted)
				}
				if accepted < credits*perBuffer {
					t.Fatalf("producer accepted only %d records, want at least the %d that fill the credits", accepted, credits*perBuffer)
				}
				if got := in.BufferedBytes(); got > limit || got == 0 {
					t.Fatalf("consumer buffers %d bytes, want between 1 and %d", got, limit)
				}
				if got := cons.BufferedBytes(); got > limit {
					t.Fatalf("consumer plane buffers %d bytes, want at most %d", got, limit)
				}
				t.Logf("%s: blocked after %d records; consumer holds %d bytes (limit %d)", tc.name, accepted, in.BufferedBytes(), limit)

				for n := range total {
					got, err := in.Next(ctx)
					if err != nil {
						t.Fatalf("Next %d: %v", n, err)
					}
					if !bytes.Equal(got, record(n, recordBytes)) {
						t.Fatalf("record %d out of order: %q", n, got)
					}
				}
				if _, err := in.Next(ctx); !errors.Is(err, io.EOF) {
					t.Fatalf("got %v, want io.EOF", err)
				}
				if err := <-errc; err != nil {
					t.Fatalf("producer: %v", err)
				}
				if peak := in.PeakBufferedBytes(); peak > limit {
					t.Fatalf("consumer peaked at %d buffered bytes, want at most %d", peak, limit)
				}
			})
		}
	}
}

// TestBlockedCallsHonourContext: Write, Flush, Close and Next return the
// context's error when it ends while they wait.
func TestBlockedCallsHonourContext(t *testing.T) {
	for _, mode := range modes {
		t.Run(mode, func(t *testing.T) {
			ctx := testCtx(t)
			opts := Options{BufferBytes: 256, CreditsPerChannel: 1, FlushInterval: -1}
			prod, cons := pair(t, mode, opts)
			id := chanID(1, 0, 0)
			in := cons.OpenInput(id)
			out, err := prod.OpenOutput(ctx, id, cons.Addr())
			if err != nil {
				t.Fatalf("OpenOutput: %v", err)
			}

			canceled, cancel := context.WithCancel(ctx)
			cancel()
			if _, err := in.Next(canceled); !errors.Is(err, context.Canceled) {
				t.Fatalf("Next on a canceled context: got %v, want context.Canceled", err)
			}
			// Fill the one credit and the buffer being built.
			writeCtx, stopWrite := context.WithCancel(ctx)
			errc := make(chan error, 1)
			go func() {
				for n := 0; ; n++ {
					if err := out.Write(writeCtx, record(n, 50)); err != nil {
						errc <- err
						return
					}
				}
			}()
			// Blocked for lack of credit, not merely before the first credit.
			waitFor(t, "Write to block with the consumer full", func() bool {
				in.mu.Lock()
				full := len(in.queue) == 1
				in.mu.Unlock()
				return full && out.BackPressured()
			})
			stopWrite()
			if err := <-errc; !errors.Is(err, context.Canceled) {
				t.Fatalf("blocked Write: got %v, want context.Canceled", err)
			}
			for _, op := range []struct {
				name string
				call func(context.Context) error
			}{{"Flush", out.Flush}, {"Close", out.Close}} {
				opCtx, stop := context.WithCancel(ctx)
				go func() { errc <- op.call(opCtx) }()
				waitFor(t, op.name+" to block", out.BackPressured)
				stop()
				if err := <-errc; !errors.Is(err, context.Canceled) {
					t.Fatalf("blocked %s: got %v, want context.Canceled", op.name, err)
				}
			}
			// The channel still works after the cancellations.
			for {
				if _, err := in.Next(ctx); err != nil {
					t.Fatalf("Next: %v", err)
				}
				if in.BufferedBytes() == 0 {
					break
				}
			}
			if err := out.Close(ctx); err != nil {
				t.Fatalf("Close after draining: %v", err)
			}
			for {
				_, err := in.Next(ctx)
				if errors.Is(err, io.EOF) {
					break
				}
				if err != nil {
					t.Fatalf("Next: %v", err)
				}
			}
		})
	}
}
