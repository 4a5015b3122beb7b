package netplane

import (
	"context"
	"encoding/binary"
	"fmt"
)

// A channel whose ends are on the same plane may carry records unencoded: the producer
// adds each record to the side car of the buffer it writes (a value netplane does not look
// into) and writes to the buffer only a short head (the caller's header and the record's
// index in the side car). The side car travels with its buffer, under the same credits, so
// records, watermarks and barriers keep their order; the consumer reads it with the buffer
// (ReadRecords) and it is released once the buffer's last record was read. A side-car
// record counts against the buffer's BufferBytes with its head and its in-memory size
// (SideAppender.SideBytes), so a channel holds no more in flight than with encoded records.

// SideAppender adds the record being written to a buffer's side car.
type SideAppender interface {
	// AppendSide adds the record to side (nil: the buffer has no side car yet, start one)
	// and returns the side car and the record's index in it.
	AppendSide(side any) (any, int)
	// SideBytes is the in-memory size of one record in a side car (0 counts as 1).
	SideBytes() int
}

// SideReleaser is a side car that wants to know when its buffer was read to the end (to be
// reused); the consumer must not touch it afterwards.
type SideReleaser interface {
	Release()
}

// Local reports whether the consumer is on this output's plane, so WriteSide may be used.
func (o *Output) Local() bool {
	o.mu.Lock()
	defer o.mu.Unlock()
	return o.local
}

// WriteSide writes a record whose body travels in the buffer's side car: s adds it there,
// and the buffer gets head followed by the record's uvarint index in the side car. It blocks
// like WriteRecord. Only a Local output takes side-car records.
func (o *Output) WriteSide(ctx context.Context, head []byte, s SideAppender) error {
	// A record larger than a buffer takes one of its own; unlike WriteRecord's it needs no
	// larger byte buffer.
	need := min(recordLen(len(head)+binary.MaxVarintLen64)+max(s.SideBytes(), 1), o.bufferBytes)
	o.mu.Lock()
	defer o.mu.Unlock()
	if !o.local {
		if err := o.usableLocked(); err != nil {
			return err
		}
		return fmt.Errorf("netplane: channel %s: a side-car record for a consumer on another plane", o.id)
	}
	if err := o.reserveLocked(ctx, need); err != nil {
		return err
	}
	side, idx := s.AppendSide(o.side)
	o.side = side
	o.sideBytes += max(s.SideBytes(), 1)
	var ix [binary.MaxVarintLen64]byte
	n := binary.PutUvarint(ix[:], uint64(idx))
	o.buf = append(append(binary.AppendUvarint(o.buf, uint64(len(head)+n)), head...), ix[:n]...)
	o.appendedLocked()
	return nil
}

// releaseSide tells a side car its buffer was read to the end.
func releaseSide(side any) {
	if r, ok := side.(SideReleaser); ok {
		r.Release()
	}
}
