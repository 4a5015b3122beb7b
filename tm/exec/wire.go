package exec

import (
	"encoding/binary"
	"fmt"

	"github.com/tidestream/tide/core/jobgraph"
)

// Tags of in-band messages.
const (
	tagRecord     byte = 0 // record without event timestamp: payload
	tagRecordTs   byte = 1 // record with timestamp: varint ts, payload
	tagWatermark  byte = 2 // varint watermark
	tagBarrier    byte = 3 // varint checkpoint id, varint timestamp
	tagEndOfData  byte = 4 // no payload: the producer's input ended; barriers may still follow
	noTimestamp        = int64(-1 << 63)
	maxMessageTag      = tagKeyedRecordTs
)

// tagSavepointBarrier is a barrier of a savepoint: varint checkpoint id, varint timestamp,
// then the savepoint's format, storage URI and directory, each a varint length and bytes
// (see checkpoint_savepoint.go).
const tagSavepointBarrier byte = 5

// Records on a HASH edge carry the key group the producer routed them by, so the keyed
// operator consuming them need not hash the key again (stream.RecordBatch.EmitRangeKeyed).
const (
	tagKeyedRecord   byte = 6 // uvarint key group, payload
	tagKeyedRecordTs byte = 7 // varint ts, uvarint key group, payload
	noKeyGroup            = -1
)

// A record whose body travels unencoded in its network buffer's side car (its consumer is
// in the same TaskManager: stream/side_car.go, netplane.Output.WriteSides) has tagSide added
// to its tag, and its payload is its uvarint index in the side car.
const tagSide byte = 0x10

// sideIndex reads the payload of a side-car record: its index in the side car.
func sideIndex(payload []byte) (int, error) {
	v, n := binary.Uvarint(payload)
	if n <= 0 || n != len(payload) || v > 1<<31 {
		return 0, fmt.Errorf("record: bad side-car index %x", payload)
	}
	return int(v), nil
}

func appendRecordHeader(dst []byte, ts int64) []byte {
	if ts == noTimestamp {
		return append(dst, tagRecord)
	}
	dst = append(dst, tagRecordTs)
	return binary.AppendVarint(dst, ts)
}

// appendKeyedRecordHeader is appendRecordHeader for a record of key group kg.
func appendKeyedRecordHeader(dst []byte, ts int64, kg int) []byte {
	if ts == noTimestamp {
		return binary.AppendUvarint(append(dst, tagKeyedRecord), uint64(kg))
	}
	dst = binary.AppendVarint(append(dst, tagKeyedRecordTs), ts)
	return binary.AppendUvarint(dst, uint64(kg))
}

func appendWatermark(dst []byte, wm int64) []byte {
	return binary.AppendVarint(append(dst, tagWatermark), wm)
}

func appendBarrier(dst []byte, id, ts int64) []byte {
	dst = binary.AppendVarint(append(dst, tagBarrier), id)
	return binary.AppendVarint(dst, ts)
}

func appendEndOfData(dst []byte) []byte { return append(dst, tagEndOfData) }

// message is one decoded in-band message (record payload not yet decoded).
type message struct {
	tag     byte
	ts      int64 // record timestamp, watermark, or barrier timestamp
	id      int64 // barrier checkpoint id
	kg      int32 // a keyed record's key group (noKeyGroup: none)
	side    bool  // a side-car record: payload is its index in the buffer's side car
	payload []byte
	sp      *SavepointTarget // a savepoint barrier's target
}

func parseMessage(b []byte) (message, error) {
	if len(b) == 0 {
		return message{}, fmt.Errorf("empty message")
	}
	m := message{tag: b[0], ts: noTimestamp, kg: noKeyGroup}
	rest := b[1:]
	if m.tag&tagSide != 0 {
		switch base := m.tag &^ tagSide; base {
		case tagRecord, tagRecordTs, tagKeyedRecord, tagKeyedRecordTs:
			m.tag, m.side = base, true
		default:
			return m, fmt.Errorf("unknown message tag %d (this build knows 0..%d, and records %d..%d with a side car)", m.tag, maxMessageTag, tagSide|tagRecord, tagSide|tagKeyedRecordTs)
		}
	}
	switch m.tag {
	case tagRecord:
		m.payload = rest
	case tagRecordTs:
		ts, n := binary.Varint(rest)
		if n <= 0 {
			return m, fmt.Errorf("record: bad timestamp")
		}
		m.ts, m.payload = ts, rest[n:]
	case tagKeyedRecord:
		kg, n := parseKeyGroup(rest)
		if n <= 0 {
			return m, fmt.Errorf("record: bad key group")
		}
		m.kg, m.payload = kg, rest[n:]
	case tagKeyedRecordTs:
		ts, n := binary.Varint(rest)
		if n <= 0 {
			return m, fmt.Errorf("record: bad timestamp")
		}
		kg, n2 := parseKeyGroup(rest[n:])
		if n2 <= 0 {
			return m, fmt.Errorf("record: bad key group")
		}
		m.ts, m.kg, m.payload = ts, kg, rest[n+n2:]
	case tagWatermark:
		wm, n := binary.Varint(rest)
		if n <= 0 || n != len(rest) {
			return m, fmt.Errorf("watermark: bad value")
		}
		m.ts = wm
	case tagBarrier, tagSavepointBarrier:
		id, n := binary.Varint(rest)
		if n <= 0 {
			return m, fmt.Errorf("barrier: bad checkpoint id")
		}
		ts, n2 := binary.Varint(rest[n:])
		if n2 <= 0 || (m.tag == tagBarrier && n+n2 != len(rest)) {
			return m, fmt.Errorf("barrier %d: bad timestamp", id)
		}
		m.id, m.ts = id, ts
		if m.tag == tagSavepointBarrier {
			sp, err := parseSavepointTarget(rest[n+n2:])
			if err != nil {
				return m, fmt.Errorf("savepoint barrier %d: %w", id, err)
			}
			m.sp = &sp
		}
	case tagEndOfData:
		if len(rest) != 0 {
			return m, fmt.Errorf("end of data: %d unexpected payload bytes", len(rest))
		}
	default:
		return m, fmt.Errorf("unknown message tag %d (this build knows 0..%d)", m.tag, maxMessageTag)
	}
	return m, nil
}

// parseKeyGroup reads a record's uvarint key group; n <= 0 when it is malformed or not
// below jobgraph.UpperBoundMaxParallelism.
func parseKeyGroup(b []byte) (kg int32, n int) {
	v, n := binary.Uvarint(b)
	if n <= 0 || v >= jobgraph.UpperBoundMaxParallelism {
		return 0, -1
	}
	return int32(v), n
}
