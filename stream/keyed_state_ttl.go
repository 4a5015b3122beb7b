package stream

import (
	"encoding/binary"
	"time"
)

// State TTL in the stored bytes: with a TTL, every value (a map entry, a list element, a
// ValueState value) starts with the 8-byte big-endian processing time in milliseconds of
// its last renewal; without one, values are stored as the codec writes them.
//
// Cleanup (Pebble has no compaction filter, so none happens in compactions): an expired
// value is never returned; it is deleted when an access meets it (Value, Get, Contains,
// Entries/Keys/Values, a list's Get), and it is left out of every checkpoint and savepoint
// and skipped on restore, so a restore drops what expired before it.

const ttlStampLen = 8

// ttlOn says whether values carry a timestamp.
func (c TTLConfig) ttlOn() bool { return c.TTL > 0 }

// stamp appends the timestamp of a write now (nothing without a TTL).
func (c TTLConfig) stamp(dst []byte) []byte {
	if !c.ttlOn() {
		return dst
	}
	return binary.BigEndian.AppendUint64(dst, uint64(c.now().UnixMilli()))
}

// renewOnRead says whether a read renews the time to live.
func (c TTLConfig) renewOnRead() bool { return c.ttlOn() && c.Update == TTLOnReadAndWrite }

// unwrap strips the timestamp and says whether the value is live.
func (c TTLConfig) unwrap(b []byte) ([]byte, bool) {
	if !c.ttlOn() {
		return b, true
	}
	if len(b) < ttlStampLen {
		return nil, false
	}
	ts := time.UnixMilli(int64(binary.BigEndian.Uint64(b)))
	return b[ttlStampLen:], c.now().Sub(ts) < c.TTL
}

// frozen is c with its clock stopped now: a checkpoint written after the barrier keeps
// what was live at the barrier.
func (c TTLConfig) frozen() TTLConfig {
	at := c.now()
	c.Now = func() time.Time { return at }
	return c
}

func (c TTLConfig) now() time.Time {
	if c.Now == nil {
		return time.Now()
	}
	return c.Now()
}
