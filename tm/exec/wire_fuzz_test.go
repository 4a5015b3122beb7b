package exec

import (
	"bytes"
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
		m2, err := parseMessage(again)
		if err != nil {
			t.Fatalf("re-encoding %x gives %x, which does not parse: %v", b, again, err)
		}
		if m2.tag != m.tag || m2.ts != m.ts || m2.id != m.id || m2.kg != m.kg || !bytes.Equal(m2.payload, m.payload) || (m.sp != nil && *m2.sp != *m.sp) {
			t.Fatalf("%x parsed as %+v, re-encoded as %x, parsed as %+v", b, m, again, m2)
		}
	})
}
