package netplane

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"testing"
	"time"
)

// TestReadRecords reads a channel buffer by buffer, stopping after every few records (the
// rest must come first on the next call), across more buffers than the producer has
// credits for (each read buffer's credit must go back), then sees io.EOF.
func TestReadRecords(t *testing.T) {
	sizes := []int{0, 1, 7, 100, 1000, 200}
	opts := Options{BufferBytes: 512, CreditsPerChannel: 1, FlushInterval: time.Millisecond}
	const records = 2000
	for _, mode := range modes {
		for _, stopEvery := range []int{0, 1, 3} {
			t.Run(fmt.Sprintf("%s/stop-every-%d", mode, stopEvery), func(t *testing.T) {
				ctx := testCtx(t)
				prod, cons := pair(t, mode, opts)
				id := chanID(1, 0, 0)
				in := cons.OpenInput(id)
				out, err := prod.OpenOutput(ctx, id, cons.Addr())
				if err != nil {
					t.Fatalf("OpenOutput: %v", err)
				}
				errc := make(chan error, 1)
				go func() {
					for n := range records {
						if err := out.Write(ctx, record(n, sizes[n%len(sizes)])); err != nil {
							errc <- err
							return
						}
					}
					errc <- out.Close(ctx)
				}()
				n, calls := 0, 0
				for {
					seen := 0
					err := in.ReadRecords(ctx, func(rec []byte, _ any) bool {
						if want := record(n, sizes[n%len(sizes)]); !bytes.Equal(rec, want) {
							t.Fatalf("record %d: got %d bytes %q..., want %d bytes", n, len(rec), rec[:min(len(rec), 20)], len(want))
						}
						n++
						seen++
						return stopEvery == 0 || seen < stopEvery
					})
					calls++
					if errors.Is(err, io.EOF) {
						break
					}
					if err != nil {
						t.Fatalf("ReadRecords after %d records: %v", n, err)
					}
					if seen == 0 {
						t.Fatalf("ReadRecords returned without a record or an error after %d records", n)
					}
				}
				if n != records {
					t.Fatalf("read %d records, want %d", n, records)
				}
				if stopEvery > 0 && calls < records/stopEvery {
					t.Fatalf("%d calls for %d records stopping every %d", calls, n, stopEvery)
				}
				if err := <-errc; err != nil {
					t.Fatalf("producer: %v", err)
				}
				if err := in.ReadRecords(ctx, func([]byte, any) bool { t.Fatal("record after EOF"); return false }); !errors.Is(err, io.EOF) {
					t.Fatalf("ReadRecords after EOF: got %v, want io.EOF again", err)
				}
			})
		}
	}
}

// TestReadRecordsCorruptBuffer: a buffer whose record length overruns it fails the channel
// with ErrProtocol, after handing on the records before it.
func TestReadRecordsCorruptBuffer(t *testing.T) {
	ctx := testCtx(t)
	p := newTestPlane(t, Options{})
	in := p.OpenInput(chanID(1, 0, 0))
	link := &countingLink{}
	if err := in.bind(link); err != nil {
		t.Fatal(err)
	}
	buf := appendRecord(appendRecord(p.pool.get(0), []byte("ok")), []byte("fine"))
	buf = append(buf, 9, 'x') // claims 9 bytes, has 1
	if err := in.deliver(buf, nil); err != nil {
		t.Fatal(err)
	}
	var got []string
	err := in.ReadRecords(ctx, func(rec []byte, _ any) bool { got = append(got, string(rec)); return true })
	if !errors.Is(err, ErrProtocol) {
		t.Fatalf("ReadRecords: got %v, want ErrProtocol", err)
	}
	if len(got) != 2 || got[0] != "ok" || got[1] != "fine" {
		t.Fatalf("records before the corrupt one: %q", got)
	}
	if !link.rejected {
		t.Fatal("the producer was not told the channel failed")
	}
}

type countingLink struct {
	credits  int
	rejected bool
}

func (l *countingLink) grantCredit(n int) { l.credits += n }
func (l *countingLink) reject(error)      { l.rejected = true }
