package exec

import (
	"bytes"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/tidestream/tide/examples"
	"github.com/tidestream/tide/stream"
)

// FuzzParseMessage: any input parses or fails cleanly, and what parses re-encodes to a
// message that parses to the same thing.
func FuzzParseMessage(f *testing.F) {
	f.Add(appendRecordHeader(nil, noTimestamp))
	f.Add(append(appendRecordHeader(nil, 42), "payload"...))
	f.Add(append(appendKeyedRecordHeader(nil, noTimestamp, 5), "payload"...))
	f.Add(append(appendKeyedRecordHeader(nil, -3, 32767), "payload"...))
	f.Add(appendWatermark(nil, -7))
	f.Add(appendBarrier(nil, 3, 1700000000000))
	f.Add(appendEndOfData(nil))
	f.Add(appendSavepointBarrier(nil, 4, 1700000000000, SavepointTarget{Format: "CANONICAL", StorageURI: "file:///sp", Dir: "savepoint-ab-12"}))
	f.Add(appendKeyedRecordHeader(appendRecordHeader(appendSideRunHead(nil, 7, 2), 42), noTimestamp, 300))
	f.Add(appendSideRunHead(nil, 0, 0))
	f.Add([]byte{tagSideRun, 0x80})
	f.Add([]byte{9})
	f.Fuzz(func(t *testing.T, b []byte) {
		m, err := parseMessage(b)
		if err != nil {
			return
		}
		var again []byte
		switch m.tag {
		case tagRecord, tagRecordTs:
			again = append(appendRecordHeader(nil, m.ts), m.payload...)
		case tagKeyedRecord, tagKeyedRecordTs:
			if m.kg < 0 {
				t.Fatalf("%x parsed as a keyed record of key group %d", b, m.kg)
			}
			again = append(appendKeyedRecordHeader(nil, m.ts, int(m.kg)), m.payload...)
		case tagWatermark:
			again = appendWatermark(nil, m.ts)
		case tagBarrier:
			again = appendBarrier(nil, m.id, m.ts)
		case tagEndOfData:
			again = appendEndOfData(nil)
		case tagSavepointBarrier:
			again = appendSavepointBarrier(nil, m.id, m.ts, *m.sp)
		case tagSideRun:
			if m.n <= 0 {
				t.Fatalf("%x parsed as a side-car run of %d records", b, m.n)
			}
			again = append(appendSideRunHead(nil, m.first, m.n), m.payload...)
			// Its headers read one by one or fail cleanly.
			heads := m.payload
			for range m.n {
				var err error
				if _, _, heads, err = nextRunHead(heads); err != nil {
					break
				}
			}
		}
		m2, err := parseMessage(again)
		if err != nil {
			t.Fatalf("re-encoding %x gives %x, which does not parse: %v", b, again, err)
		}
		if m2.tag != m.tag || m2.first != m.first || m2.n != m.n || m2.ts != m.ts || m2.id != m.id || m2.kg != m.kg || !bytes.Equal(m2.payload, m.payload) || (m.sp != nil && *m2.sp != *m.sp) {
			t.Fatalf("%x parsed as %+v, re-encoded as %x, parsed as %+v", b, m, again, m2)
		}
	})
}

// sideCarOf returns a side car holding recs, filled by v's typed output as the router has
// it filled.
func sideCarOf(t *testing.T, v *stream.Vertex, recs []examples.WordCount) any {
	t.Helper()
	r := &sideCatcher{}
	out := v.OutputCollector(r)
	for _, w := range recs {
		if err := out.Collect(w, noTimestamp); err != nil {
			t.Fatal(err)
		}
	}
	if err := out.(stream.StagedCollector).FlushStaged(); err != nil {
		t.Fatal(err)
	}
	if r.side == nil {
		t.Fatalf("%s's typed output filled no side car", v.Name)
	}
	return r.side
}

// sideCatcher is a SideRouter that puts every run it is given into one side car.
type sideCatcher struct{ side any }

func (r *sideCatcher) Collect(any, int64) error            { return fmt.Errorf("a record outside a run") }
func (r *sideCatcher) Route(int64, []byte, []uint64) error { return fmt.Errorf("an encoded record") }
func (r *sideCatcher) StageLimit() int                     { return 1 << 10 }

func (r *sideCatcher) RouteRecords(recs stream.PendingRecords) error {
	order := make([]int32, recs.Len())
	for j := range order {
		order[j] = int32(j)
	}
	r.side = recs.AppendSides(r.side, order)
	return nil
}

// TestSideRun: a side-car run parses to its first index, count and record headers, which
// the input reads into its batch with the side car's records; a run that names records its
// side car lacks, has fewer or more headers than its count, or a header that is no
// record's, is an error.
func TestSideRun(t *testing.T) {
	job, err := examples.BuildWordCount([]string{"--input", t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	dst, err := job.Vertex("count")
	if err != nil {
		t.Fatal(err)
	}
	src, err := job.Vertex("lines")
	if err != nil {
		t.Fatal(err)
	}
	side := sideCarOf(t, src, []examples.WordCount{{Word: "a", Count: 1}, {Word: "b", Count: 2}, {Word: "c", Count: 3}})
	heads := appendKeyedRecordHeader(appendRecordHeader(appendKeyedRecordHeader(nil, noTimestamp, 5), 42), -3, 300)
	run := append(appendSideRunHead(nil, 0, 3), heads...)
	m, err := parseMessage(run)
	if err != nil {
		t.Fatal(err)
	}
	if m.tag != tagSideRun || m.first != 0 || m.n != 3 || !bytes.Equal(m.payload, heads) {
		t.Fatalf("parsed %+v, want a run of records 0..2 with headers %x", m, heads)
	}

	c := &inputChan{keyed: true}
	// take reads a run message as the input does: parsed, then its records taken.
	take := func(b *batch, run []byte, side any) error {
		m, err := parseMessage(run)
		if err != nil {
			return err
		}
		return c.takeSideRun(b, m, side)
	}
	b := &batch{recs: dst.Inputs[0].NewBatch(), from: c}
	b.addRecords(0, 0) // an empty run of records before: the side-car run goes on with it
	if err := take(b, run, side); err != nil {
		t.Fatal(err)
	}
	if want := []int64{noTimestamp, 42, -3}; !slices.Equal(b.ts, want) {
		t.Errorf("timestamps %v, want %v", b.ts, want)
	}
	if want := []int32{5, noKeyGroup, 300}; !slices.Equal(b.kgs, want) {
		t.Errorf("key groups %v, want %v", b.kgs, want)
	}
	if len(b.events) != 1 || b.events[0].kind != evRecords || b.events[0].rec != 0 || b.events[0].n != 3 {
		t.Errorf("events %+v, want one run of records 0..2", b.events)
	}
	out := &captureCollector{}
	if err := b.recs.EmitRange(0, 3, b.ts, out); err != nil {
		t.Fatal(err)
	}
	if want := []examples.WordCount{{Word: "a", Count: 1}, {Word: "b", Count: 2}, {Word: "c", Count: 3}}; !slices.Equal(out.got, want) {
		t.Errorf("records %v, want %v", out.got, want)
	}

	for _, bad := range []struct {
		name string
		run  []byte
		want string
	}{
		{"past the side car", append(appendSideRunHead(nil, 2, 2), appendRecordHeader(appendRecordHeader(nil, noTimestamp), noTimestamp)...), "side-car records 2..3 of a side car of 3"},
		{"fewer headers", append(appendSideRunHead(nil, 0, 2), tagRecord), "fewer record headers"},
		{"more headers", append(appendSideRunHead(nil, 0, 1), tagRecord, tagRecord), "1 bytes after its 1 record headers"},
		{"a barrier's header", append(appendSideRunHead(nil, 0, 1), tagBarrier, 1, 1), "a record header of tag 3"},
		{"a bad key group", append(appendSideRunHead(nil, 0, 1), tagKeyedRecord, 0x80), "bad key group"},
		{"no records", appendSideRunHead(nil, 0, 0), "bad record count"},
	} {
		b := &batch{recs: dst.Inputs[0].NewBatch(), from: c}
		if err := take(b, bad.run, side); err == nil || !strings.Contains(err.Error(), bad.want) {
			t.Errorf("%s: got %v, want an error saying %q", bad.name, err, bad.want)
		}
	}
	if err := take(&batch{recs: dst.Inputs[0].NewBatch(), from: c}, run, "not a side car"); err == nil {
		t.Error("a run whose buffer has no side car of its type: no error")
	}
}
