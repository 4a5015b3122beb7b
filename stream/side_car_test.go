package stream_test

import (
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/tidestream/tide/stream"
)

// sideRelay is the runtime's end of a chain with a consumer in the same process: records
// routed in runs through RouteRecords go into side cars and from there into the next
// vertex's chain unencoded (what netplane and the task loop do for a local channel);
// records routed encoded (Route) are decoded as from the network.
type sideRelay struct {
	t       *testing.T
	batch   stream.RecordBatch
	next    stream.Collector
	out     stream.VertexOutput // the producer's output, to check encodings and key hashes
	in      stream.VertexInput
	limit   int
	staged  stream.StagedCollector
	side    any
	sideN   int // records in side
	runs    []int
	viaSide int
	encoded int
}

func (r *sideRelay) Collect(any, int64) error {
	return fmt.Errorf("sideRelay: a record reached the router boxed")
}

func (r *sideRelay) Route(ts int64, payload []byte, _ []uint64) error {
	r.encoded++
	i, err := r.batch.Decode(payload)
	if err != nil {
		return err
	}
	return r.batch.Emit(i, ts, r.next)
}

func (r *sideRelay) StageLimit() int { return r.limit }

func (r *sideRelay) setStage(s stream.StagedCollector) { r.staged = s }

func (r *sideRelay) RouteRecords(recs stream.PendingRecords) error {
	n := recs.Len()
	r.runs = append(r.runs, n)
	r.viaSide += n
	if len(recs.Timestamps()) != n {
		r.t.Fatalf("%d timestamps for %d records", len(recs.Timestamps()), n)
	}
	hashes := recs.KeyHashes(0, nil)
	order := make([]int32, n)
	for j := range n {
		order[j] = int32(j)
		// What the router hands a consumer in another process: the record's encoding, and
		// the key hash the boxed path computes.
		enc := string(recs.Encode(j))
		v, err := r.in.Decode([]byte(enc))
		if err != nil {
			r.t.Fatalf("record %d of a run: its encoding %q does not decode: %v", j, enc, err)
		}
		if again := string(r.out.Append(nil, v)); again != enc {
			r.t.Fatalf("record %d of a run: encoded %q, the boxed path %q", j, enc, again)
		}
		if r.out.KeyHash != nil && hashes[j] != r.out.KeyHash(v) {
			r.t.Fatalf("record %d of a run (%v): key hash %x, the boxed path's %x", j, v, hashes[j], r.out.KeyHash(v))
		}
	}
	// Two appends, the second to the side car the first started or went on with.
	side := recs.AppendSides(r.side, order[:n/2])
	side = recs.AppendSides(side, order[n/2:])
	i, err := r.batch.TakeSides(side, r.sideN, n)
	if err != nil {
		return err
	}
	for j := range n {
		if err := r.batch.Emit(i+j, recs.Timestamps()[j], r.next); err != nil {
			return err
		}
	}
	r.side, r.sideN = side, r.sideN+n
	if r.sideN >= 64 { // a full side car: its buffer was read, it goes back for reuse
		side.(interface{ Release() }).Release()
		r.side, r.sideN = nil, 0
	}
	return nil
}

// wordCountRelay chains WordCount's "lines" to its "count" through a sideRelay routing
// runs of up to limit records, and returns the relay and the head of "lines".
func wordCountRelay(t *testing.T, job *stream.Job, limit int) (*sideRelay, stream.Collector) {
	t.Helper()
	var r2 captureRouter
	head2, v2 := chainOf(t, job, "count", &r2)
	v1, err := job.Vertex("lines")
	if err != nil {
		t.Fatal(err)
	}
	relay := &sideRelay{t: t, batch: v2.Inputs[0].NewBatch(), next: head2, out: v1.Outputs[0], in: v2.Inputs[0], limit: limit}
	head1, _ := chainOf(t, job, "lines", relay)
	return relay, head1
}

// TestSideCarWordCount runs WordCount's two vertices with the records of a value type
// crossing in side cars: every record takes that path, and the counts are those of the
// encoded path.
func TestSideCarWordCount(t *testing.T) {
	sink := &countSink{got: map[string]int64{}}
	job := wordCountJob(t, func(s stream.DataStream[word]) {
		stream.Sink(s, "sink", func() stream.Operator { return sink })
	})
	relay, head1 := wordCountRelay(t, job, 7)
	if relay.staged == nil {
		t.Fatal("the chain's output to a SideRouter is no StagedCollector")
	}
	want := map[string]int64{}
	for i := range 100 {
		line := fmt.Sprintf("w%d w%d x", i%7, i%3)
		for _, w := range strings.Fields(line) {
			want[w]++
		}
		if err := head1.Collect(line, int64(i)); err != nil {
			t.Fatal(err)
		}
		if i == 49 { // the runtime flushes at the end of a step
			if err := relay.staged.FlushStaged(); err != nil {
				t.Fatal(err)
			}
		}
	}
	if relay.viaSide != 297 { // 150 up to the flush, then 21 full runs of 7
		t.Fatalf("%d records routed before the last flush, want 297", relay.viaSide)
	}
	if err := relay.staged.FlushStaged(); err != nil {
		t.Fatal(err)
	}
	if err := relay.staged.FlushStaged(); err != nil { // nothing held: nothing routed
		t.Fatal(err)
	}
	if relay.encoded != 0 || relay.viaSide != 300 {
		t.Fatalf("%d records in side cars, %d encoded; want all 300 in side cars", relay.viaSide, relay.encoded)
	}
	// 150 records, runs of 7, a flush; 150 more, runs of 7, a flush.
	wantRuns := slices.Repeat([]int{7}, 21)
	wantRuns = append(wantRuns, 3)
	wantRuns = append(append(wantRuns, slices.Repeat([]int{7}, 21)...), 3)
	if !slices.Equal(relay.runs, wantRuns) {
		t.Fatalf("runs of %v, want %v", relay.runs, wantRuns)
	}
	if fmt.Sprint(sink.got) != fmt.Sprint(want) {
		t.Fatalf("counts %v, want %v", sink.got, want)
	}
}

// blob is a record holding a slice: it must not cross in a side car, or a producer reusing
// the slice would change records its consumer has not read yet.
type blob struct{ B []byte }

type blobCodec struct{}

func (blobCodec) Append(dst []byte, v blob) []byte { return stream.AppendString(dst, string(v.B)) }
func (blobCodec) Decode(src []byte) (blob, error) {
	d := stream.NewDecoder(src)
	b := blob{B: slices.Clone(d.Bytes())}
	return b, d.Err()
}

// TestSideCarOnlyForValueTypes: records of a type holding a slice are encoded even for a
// consumer in the same process, so a producer that reuses its slice after emitting changes
// nothing its consumer reads.
func TestSideCarOnlyForValueTypes(t *testing.T) {
	job := stream.NewJob("blobs", 1, 0)
	n := stream.NumberSequenceSource(job, "n", stream.NumberSequence{From: 1, To: 3})
	reused := make([]byte, 1)
	blobs := stream.FlatMap(n, "blobs", func(v int64, emit func(blob)) {
		reused[0] = byte(v)
		emit(blob{B: reused})
		reused[0] = 0xff // the producer reuses its slice at once
	}).WithCodec(blobCodec{})
	var got []byte
	stream.Sink(stream.Map(stream.Rebalance(blobs, "spread"), "first", func(b blob) word { got = append(got, b.B[0]); return word{W: string(b.B)} }), "sink", func() stream.Operator { return &countSink{got: map[string]int64{}} })
	var r2 captureRouter
	head2, v2 := chainOf(t, job, "spread", &r2)
	relay := &sideRelay{t: t, batch: v2.Inputs[0].NewBatch(), next: head2, limit: 1}
	head1, _ := chainOf(t, job, "n", relay)
	for v := int64(1); v <= 3; v++ {
		if err := head1.Collect(v, stream.NoTimestamp); err != nil {
			t.Fatal(err)
		}
	}
	if relay.viaSide != 0 || relay.encoded != 3 {
		t.Fatalf("%d records in side cars, %d encoded; want all 3 encoded", relay.viaSide, relay.encoded)
	}
	if string(got) != "\x01\x02\x03" {
		t.Fatalf("the consumer read %x, want 010203", got)
	}
}

// TestTakeSidesRejectsForeignSideCars: side-car records whose buffer carries no side car, a
// side car of another type, or records past its end are an error, not wrong records.
func TestTakeSidesRejectsForeignSideCars(t *testing.T) {
	job := wordCountJob(t, func(s stream.DataStream[word]) {
		stream.Sink(s, "sink", func() stream.Operator { return &countSink{got: map[string]int64{}} })
	})
	v2, err := job.Vertex("count")
	if err != nil {
		t.Fatal(err)
	}
	batch := v2.Inputs[0].NewBatch()
	for _, side := range []any{nil, "not a side car", []word{{"a", 1}}} {
		if _, err := batch.TakeSides(side, 0, 1); err == nil {
			t.Errorf("TakeSides from %T: no error", side)
		}
	}
	// A side car of two records, as the chain of "lines" fills it.
	relay, head1 := wordCountRelay(t, job, 2)
	if err := head1.Collect("a b", stream.NoTimestamp); err != nil {
		t.Fatal(err)
	}
	side := relay.side
	if relay.sideN != 2 {
		t.Fatalf("the chain filled a side car of %d records, want 2", relay.sideN)
	}
	for _, c := range []struct{ first, n int }{{-1, 1}, {0, 3}, {1, 2}, {2, 1}, {0, -1}} {
		if _, err := batch.TakeSides(side, c.first, c.n); err == nil {
			t.Errorf("TakeSides(%d, %d) of a side car of 2: no error", c.first, c.n)
		}
	}
	i, err := batch.TakeSides(side, 1, 1)
	if err != nil || i != 0 {
		t.Fatalf("TakeSides(1, 1) of a side car of 2: %d, %v; want record 0 of the batch", i, err)
	}
}
