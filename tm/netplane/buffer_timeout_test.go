package netplane

import (
	"bytes"
	"context"
	"errors"
	"testing"
	"time"
)

// TestBufferTimeout: a record written and never flushed reaches the consumer on its own with
// FlushEveryRecord and with a timed flush (execution.buffer-timeout 0 and 5 ms), and stays
// in the producer's buffer when timed flushing is off (-1) until Flush.
func TestBufferTimeout(t *testing.T) {
	tests := []struct {
		name      string
		opts      Options
		delivered bool // without Flush
	}{
		{"every record", Options{FlushEveryRecord: true}, true},
		{"every record beats a set interval", Options{FlushEveryRecord: true, FlushInterval: time.Hour}, true},
		{"5 ms", Options{FlushInterval: 5 * time.Millisecond}, true},
		{"only when full", Options{FlushInterval: -1}, false},
	}
	for _, mode := range modes {
		for _, tc := range tests {
			t.Run(mode+"/"+tc.name, func(t *testing.T) {
				ctx := testCtx(t)
				prod, cons := pair(t, mode, tc.opts)
				id := chanID(1, 0, 0)
				in := cons.OpenInput(id)
				out, err := prod.OpenOutput(ctx, id, cons.Addr())
				if err != nil {
					t.Fatalf("OpenOutput: %v", err)
				}
				for n := range 3 {
					if err := out.Write(ctx, record(n, 10)); err != nil {
						t.Fatalf("Write %d: %v", n, err)
					}
					if !tc.delivered {
						continue
					}
					got, err := in.Next(ctx)
					if err != nil {
						t.Fatalf("Next %d without Flush: %v", n, err)
					}
					if !bytes.Equal(got, record(n, 10)) {
						t.Fatalf("record %d: got %q", n, got)
					}
				}
				if !tc.delivered {
					short, cancel := context.WithTimeout(ctx, 50*time.Millisecond)
					_, err := in.Next(short)
					cancel()
					if !errors.Is(err, context.DeadlineExceeded) {
						t.Fatalf("Next with timed flushing off and no Flush: got %v, want nothing (deadline exceeded)", err)
					}
					if err := out.Flush(ctx); err != nil {
						t.Fatalf("Flush: %v", err)
					}
					for n := range 3 {
						if got, err := in.Next(ctx); err != nil || !bytes.Equal(got, record(n, 10)) {
							t.Fatalf("record %d after Flush: %q, %v", n, got, err)
						}
					}
				}
				if err := out.Close(ctx); err != nil {
					t.Fatalf("Close: %v", err)
				}
			})
		}
	}
}

// TestFlushEveryRecordWithoutCredit: with FlushEveryRecord and one credit, records written
// while the consumer holds the only buffer gather and leave with the next credit, in order,
// and Write never blocks on a partly filled buffer.
func TestFlushEveryRecordWithoutCredit(t *testing.T) {
	for _, mode := range modes {
		t.Run(mode, func(t *testing.T) {
			ctx := testCtx(t)
			prod, cons := pair(t, mode, Options{FlushEveryRecord: true, CreditsPerChannel: 1, BufferBytes: 4096})
			id := chanID(1, 0, 0)
			in := cons.OpenInput(id)
			out, err := prod.OpenOutput(ctx, id, cons.Addr())
			if err != nil {
				t.Fatalf("OpenOutput: %v", err)
			}
			const records = 50
			for n := range records {
				if err := out.Write(ctx, record(n, 20)); err != nil {
					t.Fatalf("Write %d: %v", n, err)
				}
			}
			for n := range records {
				got, err := in.Next(ctx)
				if err != nil || !bytes.Equal(got, record(n, 20)) {
					t.Fatalf("record %d: %q, %v", n, got, err)
				}
			}
			if err := out.Close(ctx); err != nil {
				t.Fatalf("Close: %v", err)
			}
		})
	}
}

// TestSetBufferTimeout: an output opened with timed flushing off (-1) keeps a written record
// until its buffer timeout is changed: to 0 the waiting record leaves at once and every later
// one on its own; back to -1 records wait again; to 5 ms the waiting record leaves by its
// timer. Records arrive once each, in order.
func TestSetBufferTimeout(t *testing.T) {
	for _, mode := range modes {
		t.Run(mode, func(t *testing.T) {
			ctx := testCtx(t)
			prod, cons := pair(t, mode, Options{FlushInterval: -1})
			id := chanID(1, 0, 0)
			in := cons.OpenInput(id)
			out, err := prod.OpenOutput(ctx, id, cons.Addr())
			if err != nil {
				t.Fatalf("OpenOutput: %v", err)
			}
			if got := out.BufferTimeout(); got >= 0 {
				t.Fatalf("BufferTimeout of an output of a plane with FlushInterval -1: %v, want negative", got)
			}
			next := 0
			write := func() {
				t.Helper()
				if err := out.Write(ctx, record(next, 10)); err != nil {
					t.Fatalf("Write %d: %v", next, err)
				}
				next++
			}
			expect := func(n int) {
				t.Helper()
				got, err := in.Next(ctx)
				if err != nil || !bytes.Equal(got, record(n, 10)) {
					t.Fatalf("record %d: got %q, %v", n, got, err)
				}
			}
			expectNothing := func(what string) {
				t.Helper()
				short, cancel := context.WithTimeout(ctx, 50*time.Millisecond)
				defer cancel()
				if got, err := in.Next(short); !errors.Is(err, context.DeadlineExceeded) {
					t.Fatalf("%s: got %q, %v; want nothing (deadline exceeded)", what, got, err)
				}
			}
			write()
			expectNothing("buffer timeout -1")
			out.SetBufferTimeout(0)
			expect(0)
			write()
			expect(1)
			out.SetBufferTimeout(-1)
			write()
			expectNothing("buffer timeout back to -1")
			out.SetBufferTimeout(5 * time.Millisecond)
			if got := out.BufferTimeout(); got != 5*time.Millisecond {
				t.Fatalf("BufferTimeout after SetBufferTimeout(5ms): %v", got)
			}
			expect(2)
			write()
			expect(3)
			if err := out.Close(ctx); err != nil {
				t.Fatalf("Close: %v", err)
			}
		})
	}
}
