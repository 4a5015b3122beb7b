package netplane

import (
	"encoding/binary"
	"fmt"
	"math"
)

// ChannelID names one logical channel: the records that subtask Producer of
// the edge's source vertex sends to subtask Consumer of its target vertex in
// one execution attempt.
type ChannelID struct {
	Attempt  int64
	Edge     string // "<fromVertex>-><toVertex>"
	Producer int
	Consumer int
}

func (id ChannelID) String() string {
	return fmt.Sprintf("%s[%d->%d]@%d", id.Edge, id.Producer, id.Consumer, id.Attempt)
}

// maxEdgeLen bounds the edge name on the wire.
const maxEdgeLen = math.MaxUint16

// appendChannelID encodes id as attempt(8) producer(4) consumer(4) edgeLen(2) edge.
func appendChannelID(b []byte, id ChannelID) ([]byte, error) {
	if len(id.Edge) > maxEdgeLen {
		return b, fmt.Errorf("netplane: channel %s: edge name is %d bytes, expected at most %d", id, len(id.Edge), maxEdgeLen)
	}
	if id.Producer < 0 || id.Producer > math.MaxInt32 || id.Consumer < 0 || id.Consumer > math.MaxInt32 {
		return b, fmt.Errorf("netplane: channel %s: subtask indexes must be in [0, %d]", id, math.MaxInt32)
	}
	b = binary.BigEndian.AppendUint64(b, uint64(id.Attempt))
	b = binary.BigEndian.AppendUint32(b, uint32(id.Producer))
	b = binary.BigEndian.AppendUint32(b, uint32(id.Consumer))
	b = binary.BigEndian.AppendUint16(b, uint16(len(id.Edge)))
	return append(b, id.Edge...), nil
}

// decodeChannelID is the inverse of appendChannelID; it rejects trailing bytes.
func decodeChannelID(b []byte) (ChannelID, error) {
	const fixed = 8 + 4 + 4 + 2
	if len(b) < fixed {
		return ChannelID{}, fmt.Errorf("%w: channel id is %d bytes, expected at least %d", ErrProtocol, len(b), fixed)
	}
	producer := binary.BigEndian.Uint32(b[8:])
	consumer := binary.BigEndian.Uint32(b[12:])
	if producer > math.MaxInt32 || consumer > math.MaxInt32 {
		return ChannelID{}, fmt.Errorf("%w: channel id subtask index %d->%d out of range", ErrProtocol, producer, consumer)
	}
	n := int(binary.BigEndian.Uint16(b[16:]))
	if len(b) != fixed+n {
		return ChannelID{}, fmt.Errorf("%w: channel id is %d bytes, expected %d for a %d-byte edge", ErrProtocol, len(b), fixed+n, n)
	}
	return ChannelID{
		Attempt:  int64(binary.BigEndian.Uint64(b)),
		Producer: int(producer),
		Consumer: int(consumer),
		Edge:     string(b[fixed:]),
	}, nil
}
