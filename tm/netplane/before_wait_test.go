package netplane

import (
	"bytes"
	"context"
	"errors"
	"sync/atomic"
	"testing"
	"time"
)

// TestBeforeWaitSendsOtherChannels: a producer writing two channels, one of whose consumers
// reads nothing, blocks on that channel's credit; before it does, the hook sends the other
// channel's partly filled buffer, so its consumer gets the record at once instead of after
// the buffer timeout (an hour here). With timed flushing off (-1) SendIfCredit leaves the
// partial buffer alone: only full buffers or an explicit Flush send it.
func TestBeforeWaitSendsOtherChannels(t *testing.T) {
	tests := []struct {
		name      string
		timeout   time.Duration
		delivered bool // the other channel's record arrives while the writer is blocked
	}{
		{"buffer timeout 1h", time.Hour, true},
		{"only when full", -1, false},
	}
	for _, mode := range modes {
		for _, tc := range tests {
			t.Run(mode+"/"+tc.name, func(t *testing.T) {
				ctx := testCtx(t)
				prod, cons := pair(t, mode, Options{FlushInterval: tc.timeout, CreditsPerChannel: 1, BufferBytes: 1024})
				stuckID, otherID := chanID(1, 0, 0), chanID(1, 0, 1)
				stuckIn, otherIn := cons.OpenInput(stuckID), cons.OpenInput(otherID)
				stuck, err := prod.OpenOutput(ctx, stuckID, cons.Addr())
				if err != nil {
					t.Fatalf("OpenOutput: %v", err)
				}
				other, err := prod.OpenOutput(ctx, otherID, cons.Addr())
				if err != nil {
					t.Fatalf("OpenOutput: %v", err)
				}
				// The hook must not block: the writer calls it once per blocked Write (about
				// 20 here in local mode), and a full channel would stall the writer for good.
				var ncalls atomic.Int64
				stuck.SetBeforeWait(func() {
					other.SendIfCredit()
					ncalls.Add(1)
				})
				if err := other.Write(ctx, record(0, 10)); err != nil {
					t.Fatalf("Write to %s: %v", otherID, err)
				}
				// The stuck consumer's one credit takes the first full buffer; the next one
				// fills and the write after it blocks.
				waitFor(t, "the first credits", func() bool {
					stuck.mu.Lock()
					defer stuck.mu.Unlock()
					return stuck.credits == 1
				})
				wrote := make(chan error, 1)
				go func() {
					for n := range 200 {
						if err := stuck.Write(ctx, record(n, 100)); err != nil {
							wrote <- err
							return
						}
					}
					wrote <- stuck.Flush(ctx)
				}()
				waitFor(t, "the write to block", stuck.BackPressured)
				if ncalls.Load() == 0 {
					t.Fatal("the write blocked without calling the before-wait hook")
				}
				short, cancel := context.WithTimeout(ctx, 200*time.Millisecond)
				got, err := otherIn.Next(short)
				cancel()
				switch {
				case tc.delivered && err != nil:
					t.Fatalf("Next on %s while the writer is blocked: %v, want the record", otherID, err)
				case tc.delivered && !bytes.Equal(got, record(0, 10)):
					t.Fatalf("Next on %s: got %q", otherID, got)
				case !tc.delivered && !errors.Is(err, context.DeadlineExceeded):
					t.Fatalf("Next on %s with timed flushing off: got %q, %v, want nothing (deadline exceeded)", otherID, got, err)
				}
				// Draining the stuck channel lets the writer finish; every record arrives in
				// order, and the hook ran once per blocked Write at most.
				for n := range 200 {
					got, err := stuckIn.Next(ctx)
					if err != nil || !bytes.Equal(got, record(n, 100)) {
						t.Fatalf("record %d on %s: %q, %v", n, stuckID, got, err)
					}
				}
				if err := <-wrote; err != nil {
					t.Fatalf("Write to %s: %v", stuckID, err)
				}
				if n := ncalls.Load(); n > 200 {
					t.Fatalf("hook called %d times for 200 writes", n)
				}
				if !tc.delivered {
					if err := other.Flush(ctx); err != nil {
						t.Fatalf("Flush: %v", err)
					}
					if got, err := otherIn.Next(ctx); err != nil || !bytes.Equal(got, record(0, 10)) {
						t.Fatalf("Next on %s after Flush: %q, %v", otherID, got, err)
					}
				}
				for _, o := range []*Output{stuck, other} {
					if err := o.Close(context.Background()); err != nil {
						t.Fatalf("Close %s: %v", o.ID(), err)
					}
				}
			})
		}
	}
}
