package exec

import (
	"bytes"
	"strings"
	"testing"
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
	f.Add([]byte{tagRecord | tagSide, 7})
	f.Add([]byte{tagKeyedRecord | tagSide, 5, 0x80, 1})
	f.Add([]byte{tagWatermark | tagSide, 1})
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
		}
		if m.side {
			again[0] |= tagSide
		}
		m2, err := parseMessage(again)
		if err != nil {
			t.Fatalf("re-encoding %x gives %x, which does not parse: %v", b, again, err)
		}
		if m2.tag != m.tag || m2.side != m.side || m2.ts != m.ts || m2.id != m.id || m2.kg != m.kg || !bytes.Equal(m2.payload, m.payload) || (m.sp != nil && *m2.sp != *m.sp) {
			t.Fatalf("%x parsed as %+v, re-encoded as %x, parsed as %+v", b, m, again, m2)
		}
	})
}

// TestParseSideRecord: a side-car record parses as the record it marks, with its payload
// (the index in the side car) read by sideIndex; the side-car bit on anything but a record,
// and a malformed index, are errors.
func TestParseSideRecord(t *testing.T) {
	hdr := appendKeyedRecordHeader(nil, 42, 300)
	hdr[0] |= tagSide
	m, err := parseMessage(append(hdr, 0x81, 0x01)) // index 129
	if err != nil {
		t.Fatal(err)
	}
	if m.tag != tagKeyedRecordTs || !m.side || m.ts != 42 || m.kg != 300 {
		t.Fatalf("parsed %+v, want a keyed side-car record of key group 300 at 42", m)
	}
	if idx, err := sideIndex(m.payload); err != nil || idx != 129 {
		t.Fatalf("sideIndex: %d, %v; want 129", idx, err)
	}
	for _, bad := range [][]byte{nil, {0x80}, {1, 2}} {
		if _, err := sideIndex(bad); err == nil {
			t.Errorf("sideIndex(%x): no error", bad)
		}
	}
	if _, err := parseMessage([]byte{tagBarrier | tagSide, 1, 1}); err == nil || !strings.Contains(err.Error(), "side car") {
		t.Fatalf("a barrier with the side-car bit: got %v, want an unknown tag error", err)
	}
}
