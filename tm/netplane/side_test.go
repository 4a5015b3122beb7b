package netplane

import (
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"strings"
	"sync"
	"testing"
	"time"
)

// testSide is a side car of strings that counts its releases.
type testSide struct {
	recs     []string
	released *sync.Map // *testSide -> release count
}

func (s *testSide) Release() {
	n, _ := s.released.LoadOrStore(s, new(int))
	*n.(*int)++
}

// sideRun is a SideRun of strings, every record with the head 'S', a run with the head 'R',
// the first index and the count (uvarints).
type sideRun struct {
	recs     []string
	released *sync.Map
}

func (r *sideRun) Len() int { return len(r.recs) }
func (r *sideRun) Heads() ([]byte, []int32) {
	ends := make([]int32, len(r.recs)+1)
	for k := range ends {
		ends[k] = int32(k)
	}
	return []byte(strings.Repeat("S", len(r.recs))), ends
}
func (r *sideRun) SideBytes() int { return sideStringBytes }

func (r *sideRun) AppendRunHead(dst []byte, first, count int) []byte {
	return binary.AppendUvarint(binary.AppendUvarint(append(dst, 'R'), uint64(first)), uint64(count))
}

// sideStringBytes is the in-memory size of a string (its header).
const sideStringBytes = 16

func (r *sideRun) AppendSides(side any, from, to int) any {
	s, _ := side.(*testSide)
	if s == nil {
		s = &testSide{released: r.released}
	}
	s.recs = append(s.recs, r.recs[from:to]...)
	return s
}

// TestSideCarRecords writes side-car records and encoded ones, interleaved, over a
// channel within one plane and reads them back in order: each side-car record resolves to
// its value through the buffer's side car, no buffer carries more side-car records than its
// BufferBytes allow, and every side car is released exactly once after its buffer was read.
func TestSideCarRecords(t *testing.T) {
	for _, timeout := range []time.Duration{-1, 0, time.Millisecond} {
		t.Run(fmt.Sprintf("buffer-timeout=%v", timeout), func(t *testing.T) {
			ctx := testCtx(t)
			opts := Options{BufferBytes: 256, CreditsPerChannel: 1, FlushInterval: timeout}
			p := newTestPlane(t, opts)
			id := chanID(1, 0, 0)
			in := p.OpenInput(id)
			out, err := p.OpenOutput(ctx, id, p.Addr())
			if err != nil {
				t.Fatal(err)
			}
			if !out.Local() {
				t.Fatal("an output to a consumer on the same plane is not Local")
			}
			// Runs of side-car records between encoded ones, of 1 to 40 records: the longer
			// ones fill several buffers.
			const records = 3000
			encoded := func(n int) bool { return n%41 == 40 || n%7 == 3 }
			var released sync.Map
			errc := make(chan error, 1)
			go func() {
				run := &sideRun{released: &released}
				for n := range records {
					if !encoded(n) {
						run.recs = append(run.recs, string(record(n, 30)))
						if n+1 < records && !encoded(n+1) {
							continue
						}
						if err := out.WriteSides(ctx, run); err != nil {
							errc <- err
							return
						}
						run.recs = run.recs[:0]
						continue
					}
					if err := out.Write(ctx, append([]byte{'E'}, record(n, 12)...)); err != nil {
						errc <- err
						return
					}
				}
				errc <- out.Close(ctx)
			}()
			n := 0
			perSide := map[*testSide]int{}
			for {
				err := in.ReadRecords(ctx, func(rec []byte, side any) bool {
					check := func(got string) {
						size := 30
						if encoded(n) {
							size = 12
						}
						if want := string(record(n, size)); got != want {
							t.Fatalf("record %d: got %q, want %q", n, got, want)
						}
						n++
					}
					switch rec[0] {
					case 'E':
						check(string(rec[1:]))
					case 'R':
						s, ok := side.(*testSide)
						if !ok {
							t.Fatalf("record %d: a side-car run in a buffer with side car %T", n, side)
						}
						first, k := binary.Uvarint(rec[1:])
						count, k2 := binary.Uvarint(rec[1+k:])
						heads := rec[1+k+k2:]
						if k <= 0 || k2 <= 0 || count == 0 || first+count > uint64(len(s.recs)) || string(heads) != strings.Repeat("S", int(count)) {
							t.Fatalf("record %d: bad side-car run %x (side car of %d)", n, rec, len(s.recs))
						}
						for _, v := range s.recs[first : first+count] {
							check(v)
						}
						perSide[s] += int(count)
					default:
						t.Fatalf("record %d: unknown head %q", n, rec[0])
					}
					return true
				})
				if errors.Is(err, io.EOF) {
					break
				}
				if err != nil {
					t.Fatalf("ReadRecords after %d records: %v", n, err)
				}
			}
			if err := <-errc; err != nil {
				t.Fatalf("producer: %v", err)
			}
			if n != records {
				t.Fatalf("read %d records, want %d", n, records)
			}
			bound := opts.BufferBytes / (sideStringBytes + 1) // the record's head: 'S'

			for s, k := range perSide {
				if k > bound {
					t.Errorf("a buffer carried %d side-car records, bound %d", k, bound)
				}
				c, ok := released.Load(s)
				if !ok || *c.(*int) != 1 {
					t.Errorf("a side car of %d records was released %v times, want once", k, c)
				}
			}
		})
	}
}

// TestSideCarNeedsLocalConsumer: an output whose consumer is on another plane is not Local
// and refuses side-car records (a side car cannot cross a connection), naming the channel.
func TestSideCarNeedsLocalConsumer(t *testing.T) {
	ctx := testCtx(t)
	prod, cons := pair(t, "tcp", Options{})
	id := chanID(1, 0, 0)
	cons.OpenInput(id)
	out, err := prod.OpenOutput(ctx, id, cons.Addr())
	if err != nil {
		t.Fatal(err)
	}
	if out.Local() {
		t.Fatal("an output to another plane is Local")
	}
	err = out.WriteSides(ctx, &sideRun{recs: []string{"x"}, released: &sync.Map{}})
	if err == nil || !strings.Contains(err.Error(), id.String()) || !strings.Contains(err.Error(), "another plane") {
		t.Fatalf("WriteSides to another plane: got %v, want an error naming channel %s", err, id)
	}
}

// TestSideCarDroppedOnFailure: side cars of buffers a failed input drops are released too.
func TestSideCarDroppedOnFailure(t *testing.T) {
	ctx := testCtx(t)
	p := newTestPlane(t, Options{BufferBytes: 64, CreditsPerChannel: 2, FlushInterval: -1})
	id := chanID(1, 0, 0)
	in := p.OpenInput(id)
	out, err := p.OpenOutput(ctx, id, p.Addr())
	if err != nil {
		t.Fatal(err)
	}
	var released sync.Map
	run := &sideRun{released: &released}
	// Two full buffers, both delivered (the record after them starts a third): a buffer
	// holds the length prefix and run head, and then each record's head and side bytes.
	perBuffer := (64 - 1 - MaxRunHeadBytes) / (1 + sideStringBytes)
	for n := range 2*perBuffer + 1 {
		run.recs = append(run.recs, fmt.Sprint(n))
	}
	if err := out.WriteSides(ctx, run); err != nil {
		t.Fatal(err)
	}
	// A local output hands each full buffer to the input as it fills (two credits).
	if !in.Ready() {
		t.Fatal("no buffer delivered")
	}
	in.fail(errors.New("test"), true)
	count := 0
	released.Range(func(_, _ any) bool { count++; return true })
	if count != 2 {
		t.Fatalf("%d side cars released after the input failed, want 2", count)
	}
}

// TestNextRefusesSideCars: Next cannot hand out a side-car record (its body is in the side
// car), so it says to use ReadRecords rather than return a bare head.
func TestNextRefusesSideCars(t *testing.T) {
	ctx := testCtx(t)
	p := newTestPlane(t, Options{BufferBytes: 256, CreditsPerChannel: 1, FlushInterval: 0})
	id := chanID(1, 0, 0)
	in := p.OpenInput(id)
	out, err := p.OpenOutput(ctx, id, p.Addr())
	if err != nil {
		t.Fatal(err)
	}
	if err := out.WriteSides(ctx, &sideRun{recs: []string{"x"}, released: &sync.Map{}}); err != nil {
		t.Fatal(err)
	}
	rec, err := in.Next(ctx)
	if err == nil || !strings.Contains(err.Error(), "ReadRecords") || !strings.Contains(err.Error(), id.String()) {
		t.Fatalf("Next of a side-car record: %q, %v; want an error naming the channel and ReadRecords", rec, err)
	}
}
