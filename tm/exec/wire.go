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
	maxMessageTag      = tagSideRun
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

// Records whose bodies travel unencoded in their network buffer's side car (their consumer
// is in the same TaskManager: stream/side_car.go, netplane.Output.WriteSides) come as runs:
// one message holds the uvarint index of the run's first record in the side car, the
// uvarint number of records, and then each record's header (appendRecordHeader,
// appendKeyedRecordHeader) without a payload.
const tagSideRun byte = 8

// maxSideRun bounds the records of one run message (far more than a buffer holds).
const maxSideRun = 1 << 24

func appendSideRunHead(dst []byte, first, n int) []byte {
	dst = binary.AppendUvarint(append(dst, tagSideRun), uint64(first))
	return binary.AppendUvarint(dst, uint64(n))
}

// parseSideRun reads a run message after its tag: the side-car index of its first record,
// the number of records, and their headers.
func parseSideRun(b []byte) (first, n int, heads []byte, err error) {
	f, k := binary.Uvarint(b)
	if k <= 0 || f >= maxSideRun {
		return 0, 0, nil, fmt.Errorf("side-car run: bad first index")
	}
	c, k2 := binary.Uvarint(b[k:])
	if k2 <= 0 || c == 0 || c > maxSideRun {
		return 0, 0, nil, fmt.Errorf("side-car run: bad record count (expected 1..%d)", maxSideRun)
	}
	return int(f), int(c), b[k+k2:], nil
}

// nextRunHead reads the first of a side-car run's record headers: the record's timestamp
// and key group, and the headers after it.
func nextRunHead(heads []byte) (ts int64, kg int32, rest []byte, err error) {
	if len(heads) == 0 {
		return noTimestamp, noKeyGroup, nil, fmt.Errorf("side-car run: fewer record headers than its count")
	}
	switch tag := heads[0]; tag {
	case tagRecord, tagRecordTs, tagKeyedRecord, tagKeyedRecordTs:
		ts, kg, n, err := parseRecordHead(tag, heads[1:])
		return ts, kg, heads[1+n:], err
	default:
		return noTimestamp, noKeyGroup, nil, fmt.Errorf("side-car run: a record header of tag %d (expected %d..%d)", tag, tagRecord, tagKeyedRecordTs)
	}
}

// parseRecordHead reads the header of a record of tag (tagRecord, tagRecordTs,
// tagKeyedRecord or tagKeyedRecordTs) from b, the bytes after the tag; n is the header's
// length there.
func parseRecordHead(tag byte, b []byte) (ts int64, kg int32, n int, err error) {
	ts, kg = noTimestamp, noKeyGroup
	if tag == tagRecordTs || tag == tagKeyedRecordTs {
		v, k := binary.Varint(b)
		if k <= 0 {
			return ts, kg, 0, fmt.Errorf("record: bad timestamp")
		}
		ts, n = v, k
	}
	if tag == tagKeyedRecord || tag == tagKeyedRecordTs {
		g, k := parseKeyGroup(b[n:])
		if k <= 0 {
			return ts, kg, 0, fmt.Errorf("record: bad key group")
		}
		kg, n = g, n+k
	}
	return ts, kg, n, nil
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
	first   int   // a side-car run's first record in the buffer's side car
	n       int   // a side-car run's number of records (their headers are the payload)
	payload []byte
	sp      *SavepointTarget // a savepoint barrier's target
}

func parseMessage(b []byte) (message, error) {
	if len(b) == 0 {
		return message{}, fmt.Errorf("empty message")
	}
	m := message{tag: b[0], ts: noTimestamp, kg: noKeyGroup}
	rest := b[1:]
	switch m.tag {
	case tagRecord, tagRecordTs, tagKeyedRecord, tagKeyedRecordTs:
		ts, kg, n, err := parseRecordHead(m.tag, rest)
		if err != nil {
			return m, err
		}
		m.ts, m.kg, m.payload = ts, kg, rest[n:]
	case tagSideRun:
		first, n, heads, err := parseSideRun(rest)
		if err != nil {
			return m, err
		}
		m.first, m.n, m.payload = first, n, heads
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
