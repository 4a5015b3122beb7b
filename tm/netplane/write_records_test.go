package netplane

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"testing"
	"time"
)

// testRun is a RecordRun of records split into a header of up to 3 bytes and a body.
type testRun struct{ recs [][]byte }

func (r *testRun) Len() int { return len(r.recs) }

func (r *testRun) Record(k int) (head, body []byte) {
	rec := r.recs[k]
	h := min(len(rec), 3)
	return rec[:h], rec[h:]
}

// TestWriteRecordsRuns writes runs of 1 to 40 records, of sizes below and above 127 bytes
// (one and two bytes of length) and up to a whole buffer, into small buffers with one credit,
// under every buffer timeout, then closes the output: the consumer reads every record, in
// order, as written. A run written after Close is refused.
func TestWriteRecordsRuns(t *testing.T) {
	sizes := []int{0, 1, 12, 126, 127, 128, 300, 509}
	const records = 3000
	for _, mode := range modes {
		for _, flush := range []time.Duration{-1, 0, time.Millisecond} {
			t.Run(fmt.Sprintf("%s/buffer-timeout-%v", mode, flush), func(t *testing.T) {
				ctx := testCtx(t)
				prod, cons := pair(t, mode, Options{BufferBytes: 512, CreditsPerChannel: 1, FlushInterval: flush})
				id := chanID(1, 0, 0)
				in := cons.OpenInput(id)
				out, err := prod.OpenOutput(ctx, id, cons.Addr())
				if err != nil {
					t.Fatalf("OpenOutput: %v", err)
				}
				want := func(n int) []byte { return record(n, sizes[n*7%len(sizes)]) }
				errc := make(chan error, 1)
				go func() {
					for n, size := 0, 1; n < records; n, size = n+size, size%40+1 {
						run := &testRun{}
						for k := n; k < min(n+size, records); k++ {
							run.recs = append(run.recs, want(k))
						}
						if err := out.WriteRecords(ctx, run); err != nil {
							errc <- fmt.Errorf("WriteRecords of records %d..: %w", n, err)
							return
						}
					}
					if err := out.Close(ctx); err != nil {
						errc <- err
						return
					}
					errc <- out.WriteRecords(ctx, &testRun{recs: [][]byte{want(0)}})
				}()
				n := 0
				for {
					err := in.ReadRecords(ctx, func(rec []byte, _ any) bool {
						if w := want(n); !bytes.Equal(rec, w) {
							t.Fatalf("record %d: got %d bytes %q, want %d bytes %q", n, len(rec), rec[:min(len(rec), 20)], len(w), w[:min(len(w), 20)])
						}
						n++
						return true
					})
					if errors.Is(err, io.EOF) {
						break
					}
					if err != nil {
						t.Fatalf("ReadRecords after %d records: %v", n, err)
					}
				}
				if n != records {
					t.Fatalf("read %d records, want %d", n, records)
				}
				if err := <-errc; !errors.Is(err, ErrOutputClosed) {
					t.Fatalf("WriteRecords after Close: got %v, want ErrOutputClosed", err)
				}
			})
		}
	}
}
