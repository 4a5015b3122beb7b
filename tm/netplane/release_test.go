package netplane

import (
	"bytes"
	"errors"
	"io"
	"testing"
)

// TestReleaseAttempt blocks a writer (consumer not reading) and a reader (no
// data) of one attempt, releases the attempt on either plane, and checks both
// return errors, the attempt stays closed, and the next attempt works.
func TestReleaseAttempt(t *testing.T) {
	for _, mode := range modes {
		for _, side := range []string{"producer", "consumer"} {
			t.Run(mode+"/release-on-"+side, func(t *testing.T) {
				ctx := testCtx(t)
				opts := Options{BufferBytes: 256, CreditsPerChannel: 1, FlushInterval: -1}
				prod, cons := pair(t, mode, opts)
				const attempt = 4
				full, idle := chanID(attempt, 0, 0), chanID(attempt, 1, 0)
				cons.OpenInput(full)
				idleIn := cons.OpenInput(idle)
				out, err := prod.OpenOutput(ctx, full, cons.Addr())
				if err != nil {
					t.Fatalf("OpenOutput: %v", err)
				}
				idleOut, err := prod.OpenOutput(ctx, idle, cons.Addr())
				if err != nil {
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

				releaser := prod
				if side == "consumer" {
					releaser = cons
				}
				releaser.ReleaseAttempt(attempt)

				for what, errc := range map[string]chan error{"blocked Write": writeErr, "blocked Next": readErr} {
					err := <-errc
					if !errors.Is(err, ErrReleased) && !errors.Is(err, ErrChannelReset) {
						t.Errorf("%s after release on the %s: got %v, want ErrReleased or ErrChannelReset", what, side, err)
					}
				}
				// The channel on the releasing side fails with ErrReleased.
				if side == "producer" {
					if err := idleOut.Write(ctx, []byte("x")); !errors.Is(err, ErrReleased) {
						t.Errorf("Write on released output: got %v, want ErrReleased", err)
					}
				} else if _, err := idleIn.Next(ctx); !errors.Is(err, ErrReleased) {
					t.Errorf("Next on released input: got %v, want ErrReleased", err)
				}
				if _, err := releaser.OpenOutput(ctx, chanID(attempt, 5, 5), cons.Addr()); !errors.Is(err, ErrReleased) {
					t.Errorf("OpenOutput on a released attempt: got %v, want ErrReleased", err)
				}
				if _, err := releaser.OpenInput(chanID(attempt, 6, 6)).Next(ctx); !errors.Is(err, ErrReleased) {
					t.Errorf("Next on an input of a released attempt: got %v, want ErrReleased", err)
				}
				if side == "producer" && mode == "tcp" {
					// The consumer learns of the release: after at most the
					// records already buffered, its input is reset.
					fullIn := cons.OpenInput(full)
					var err error
					for err == nil {
						_, err = fullIn.Next(ctx)
					}
					if !errors.Is(err, ErrChannelReset) {
						t.Errorf("consumer Next after producer release: got %v, want ErrChannelReset", err)
					}
				}

				// A new attempt over the same planes and connection works.
				next := chanID(attempt+1, 0, 0)
				in := cons.OpenInput(next)
				out2, err := prod.OpenOutput(ctx, next, cons.Addr())
				if err != nil {
					t.Fatalf("OpenOutput for the next attempt: %v", err)
				}
				go func() {
					for n := range 100 {
						if err := out2.Write(ctx, record(n, 60)); err != nil {
							writeErr <- err
							return
						}
					}
					writeErr <- out2.Close(ctx)
				}()
				for n := range 100 {
					got, err := in.Next(ctx)
					if err != nil || !bytes.Equal(got, record(n, 60)) {
						t.Fatalf("next attempt record %d: got %q, %v", n, got, err)
					}
				}
				if _, err := in.Next(ctx); !errors.Is(err, io.EOF) {
					t.Fatalf("got %v, want io.EOF", err)
				}
				if err := <-writeErr; err != nil {
					t.Fatalf("next attempt producer: %v", err)
				}
				if got := cons.BufferedBytes(); got != 0 {
					t.Fatalf("consumer plane still buffers %d bytes", got)
				}
			})
		}
	}
}

// TestLateOpenAfterConsumerRelease: a producer that opens a channel of an
// attempt the consumer already released gets an error instead of waiting
// forever for credit.
func TestLateOpenAfterConsumerRelease(t *testing.T) {
	ctx := testCtx(t)
	prod, cons := pair(t, "tcp", Options{})
	cons.ReleaseAttempt(9)
	out, err := prod.OpenOutput(ctx, chanID(9, 0, 0), cons.Addr())
	if err != nil {
		// The refusal raced ahead of OpenOutput's return.
		if !errors.Is(err, ErrChannelReset) {
			t.Fatalf("OpenOutput: got %v, want nil or ErrChannelReset", err)
		}
		return
	}
	if err := out.Write(ctx, []byte("late")); err != nil && !errors.Is(err, ErrChannelReset) {
		t.Fatalf("Write: got %v, want nil or ErrChannelReset", err)
	}
	if err := out.Flush(ctx); !errors.Is(err, ErrChannelReset) {
		t.Fatalf("Flush on a channel the consumer refused: got %v, want ErrChannelReset", err)
	}
}
