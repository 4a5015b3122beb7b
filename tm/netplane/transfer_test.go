package netplane

import (
	"bytes"
	"errors"
	"io"
	"sync"
	"testing"
	"time"
)

// TestTransfer sends records of mixed sizes (empty, small, exactly a buffer,
// larger than a buffer) and checks order, content and end of stream.
func TestTransfer(t *testing.T) {
	sizes := []int{0, 1, 100, 1000, 4096, 10000, 100}
	tests := []struct {
		name    string
		opts    Options
		records int
	}{
		{"defaults", Options{}, 3000},
		{"one credit tiny buffers", Options{BufferBytes: 128, CreditsPerChannel: 1, FlushInterval: -1}, 500},
		{"many credits", Options{BufferBytes: 4096, CreditsPerChannel: 16, FlushInterval: time.Millisecond}, 2000},
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
				errc := make(chan error, 1)
				go func() {
					for n := range tc.records {
						if err := out.Write(ctx, record(n, sizes[n%len(sizes)])); err != nil {
							errc <- err
							return
						}
					}
					errc <- out.Close(ctx)
				}()
				for n := range tc.records {
					got, err := in.Next(ctx)
					if err != nil {
						t.Fatalf("Next record %d: %v", n, err)
					}
					if want := record(n, sizes[n%len(sizes)]); !bytes.Equal(got, want) {
						t.Fatalf("record %d: got %d bytes %q..., want %d bytes", n, len(got), got[:min(len(got), 20)], len(want))
					}
				}
				if _, err := in.Next(ctx); !errors.Is(err, io.EOF) {
					t.Fatalf("Next after last record: got %v, want io.EOF", err)
				}
				if _, err := in.Next(ctx); !errors.Is(err, io.EOF) {
					t.Fatalf("Next after EOF: got %v, want io.EOF again", err)
				}
				if err := <-errc; err != nil {
					t.Fatalf("producer: %v", err)
				}
				if got := cons.BufferedBytes(); got != 0 {
					t.Fatalf("plane buffers %d bytes after EOF, want 0", got)
				}
			})
		}
	}
}

// TestManyChannelsShareOneConnection runs channels in both directions between
// two planes plus local ones and checks each direction used one connection.
func TestManyChannelsShareOneConnection(t *testing.T) {
	ctx := testCtx(t)
	opts := Options{BufferBytes: 512, CreditsPerChannel: 2}
	a, b := newTestPlane(t, opts), newTestPlane(t, opts)
	planes := []*Plane{a, b}
	const perPair, records = 4, 300
	var wg sync.WaitGroup
	errc := make(chan error, 64)
	for pi, from := range planes {
		for _, to := range planes {
			for k := range perPair {
				id := ChannelID{Attempt: 7, Edge: from.Addr() + "->" + to.Addr(), Producer: pi, Consumer: k}
				in := to.OpenInput(id)
				wg.Add(2)
				go func() {
					defer wg.Done()
					out, err := from.OpenOutput(ctx, id, to.Addr())
					if err != nil {
						errc <- err
						return
					}
					for n := range records {
						if err := out.Write(ctx, record(n, 50)); err != nil {
							errc <- err
							return
						}
					}
					if err := out.Close(ctx); err != nil {
						errc <- err
					}
				}()
				go func() {
					defer wg.Done()
					for n := 0; ; n++ {
						got, err := in.Next(ctx)
						if errors.Is(err, io.EOF) && n == records {
							return
						}
						if err != nil {
							errc <- err
							return
						}
						if !bytes.Equal(got, record(n, 50)) {
							errc <- errors.New("channel " + id.String() + ": records out of order")
							return
						}
					}
				}()
			}
		}
	}
	wg.Wait()
	close(errc)
	for err := range errc {
		t.Error(err)
	}
	for _, p := range planes {
		p.mu.Lock()
		dialed, accepted := len(p.dialed), len(p.accepted)
		p.mu.Unlock()
		if dialed != 1 || accepted != 1 {
			t.Errorf("plane %s: %d dialed and %d accepted connections, want 1 and 1", p.Addr(), dialed, accepted)
		}
	}
}

// TestProducerBeforeConsumer opens, fills and closes the output before the
// consumer calls OpenInput: the input is created lazily and holds the data.
func TestProducerBeforeConsumer(t *testing.T) {
	for _, mode := range modes {
		t.Run(mode, func(t *testing.T) {
			ctx := testCtx(t)
			opts := Options{BufferBytes: 1024, CreditsPerChannel: 4, FlushInterval: -1}
			prod, cons := pair(t, mode, opts)
			id := chanID(3, 1, 2)
			out, err := prod.OpenOutput(ctx, id, cons.Addr())
			if err != nil {
				t.Fatalf("OpenOutput: %v", err)
			}
			const records = 20 // fits in the credits: Close cannot block on the consumer
			for n := range records {
				if err := out.Write(ctx, record(n, 100)); err != nil {
					t.Fatalf("Write %d: %v", n, err)
				}
			}
			if err := out.Close(ctx); err != nil {
				t.Fatalf("Close: %v", err)
			}
			waitFor(t, "the consumer plane to buffer the records", func() bool {
				cons.mu.Lock()
				in := cons.inputs[id]
				cons.mu.Unlock()
				if in == nil {
					return false
				}
				in.mu.Lock()
				defer in.mu.Unlock()
				return in.ended
			})
			in := cons.OpenInput(id)
			for n := range records {
				got, err := in.Next(ctx)
				if err != nil {
					t.Fatalf("Next %d: %v", n, err)
				}
				if !bytes.Equal(got, record(n, 100)) {
					t.Fatalf("record %d: got %q", n, got)
				}
			}
			if _, err := in.Next(ctx); !errors.Is(err, io.EOF) {
				t.Fatalf("got %v, want io.EOF", err)
			}
			if again := cons.OpenInput(id); again != in {
				t.Fatalf("OpenInput twice returned two inputs")
			}
		})
	}
}

// TestTimedFlush: a record below a buffer's size arrives without Flush
// because the flusher sends partly filled buffers.
func TestTimedFlush(t *testing.T) {
	for _, mode := range modes {
		t.Run(mode, func(t *testing.T) {
			ctx := testCtx(t)
			prod, cons := pair(t, mode, Options{FlushInterval: time.Millisecond})
			id := chanID(1, 0, 0)
			in := cons.OpenInput(id)
			out, err := prod.OpenOutput(ctx, id, cons.Addr())
			if err != nil {
				t.Fatalf("OpenOutput: %v", err)
			}
			for n := range 3 {
				if err := out.Write(ctx, record(n, 10)); err != nil {
					t.Fatalf("Write: %v", err)
				}
				got, err := in.Next(ctx)
				if err != nil || !bytes.Equal(got, record(n, 10)) {
					t.Fatalf("Next: got %q, %v", got, err)
				}
			}
		})
	}
}

// TestExplicitFlush: with timed flushing off, Flush alone moves a record.
func TestExplicitFlush(t *testing.T) {
	for _, mode := range modes {
		t.Run(mode, func(t *testing.T) {
			ctx := testCtx(t)
			prod, cons := pair(t, mode, Options{FlushInterval: -1, CreditsPerChannel: 1})
			id := chanID(1, 0, 0)
			in := cons.OpenInput(id)
			out, err := prod.OpenOutput(ctx, id, cons.Addr())
			if err != nil {
				t.Fatalf("OpenOutput: %v", err)
			}
			for n := range 5 {
				if err := out.Write(ctx, record(n, 10)); err != nil {
					t.Fatalf("Write: %v", err)
				}
				if err := out.Flush(ctx); err != nil {
					t.Fatalf("Flush: %v", err)
				}
				got, err := in.Next(ctx)
				if err != nil || !bytes.Equal(got, record(n, 10)) {
					t.Fatalf("Next: got %q, %v", got, err)
				}
			}
			if err := out.Flush(ctx); err != nil {
				t.Fatalf("Flush of an empty buffer: %v", err)
			}
		})
	}
}

func TestOutputMisuse(t *testing.T) {
	for _, mode := range modes {
		t.Run(mode, func(t *testing.T) {
			ctx := testCtx(t)
			prod, cons := pair(t, mode, Options{})
			id := chanID(1, 0, 0)
			out, err := prod.OpenOutput(ctx, id, cons.Addr())
			if err != nil {
				t.Fatalf("OpenOutput: %v", err)
			}
			if _, err := prod.OpenOutput(ctx, id, cons.Addr()); err == nil {
				t.Fatalf("second OpenOutput of %s succeeded, want an error", id)
			}
			if err := out.Write(ctx, make([]byte, MaxRecordBytes+1)); err == nil {
				t.Fatalf("Write of an oversized record succeeded")
			}
			if err := out.Close(ctx); err != nil {
				t.Fatalf("Close: %v", err)
			}
			if err := out.Close(ctx); err != nil {
				t.Fatalf("second Close: %v", err)
			}
			if err := out.Write(ctx, []byte("x")); !errors.Is(err, ErrOutputClosed) {
				t.Fatalf("Write after Close: got %v, want ErrOutputClosed", err)
			}
			if err := out.Flush(ctx); !errors.Is(err, ErrOutputClosed) {
				t.Fatalf("Flush after Close: got %v, want ErrOutputClosed", err)
			}
		})
	}
}

func TestOptionsValidation(t *testing.T) {
	tests := []struct {
		name string
		opts Options
		ok   bool
	}{
		{"zero means defaults", Options{}, true},
		{"tiny buffer", Options{BufferBytes: 10}, false},
		{"negative credits", Options{CreditsPerChannel: -1}, false},
		{"no floating buffers", Options{FloatingBuffersPerGate: -1}, true},
		{"too many floating buffers", Options{FloatingBuffersPerGate: 1<<16 + 1}, false},
		{"small batch", Options{BatchBytes: 100}, false},
		{"no timed flush", Options{FlushInterval: -1}, true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			p, err := Listen(t.Context(), "127.0.0.1:0", tc.opts)
			if (err == nil) != tc.ok {
				t.Fatalf("Listen: err=%v, want ok=%v", err, tc.ok)
			}
			if p != nil {
				if err := p.Close(); err != nil {
					t.Fatal(err)
				}
			}
		})
	}
}
