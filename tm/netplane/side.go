package netplane

import (
	"context"
	"encoding/binary"
	"fmt"
)

// A channel whose ends are on the same plane may carry records unencoded: the producer
// adds each record to the side car of the buffer it writes (a value netplane does not look
// into) and writes to the buffer only short heads. The records a buffer gets from one run
// (WriteSides) are one message in it: the caller's run head (which of the side car's
// records follow) and then each record's head, one after the other, so a consumer takes
// them all at once. The side car travels with its buffer, under the same credits, so
// records, watermarks and barriers keep their order; the consumer reads it with the buffer
// (ReadRecords) and it is released once the buffer's last message was read. A side-car
// record counts against the buffer's BufferBytes with its head and its in-memory size
// (SideRun.SideBytes), so a channel holds no more in flight than with encoded records.

// SideRun is a run of records a producer writes to one output in a single call
// (WriteSides), their bodies going into side cars.
type SideRun interface {
	// Len is the number of records in the run.
	Len() int
	// Heads are the records' headers, one after the other: record k's is
	// heads[ends[k]:ends[k+1]] (ends has Len()+1 entries, the first 0). The caller's run
	// head says how a consumer tells where one ends.
	Heads() (heads []byte, ends []int32)
	// AppendRunHead appends to dst the head of a message carrying count records, the side
	// car's records first..first+count-1; at most MaxRunHeadBytes.
	AppendRunHead(dst []byte, first, count int) []byte
	// AppendSides adds records from..to-1 of the run, in order, to side (nil: the buffer has
	// no side car yet, start one) and returns the side car. They take the indexes after
	// the records side already holds.
	AppendSides(side any, from, to int) any
	// SideBytes is the in-memory size of one record in a side car (0 counts as 1).
	SideBytes() int
}

// MaxRunHeadBytes bounds a run head (SideRun.AppendRunHead): a tag and two uvarints.
const MaxRunHeadBytes = 1 + 2*binary.MaxVarintLen64

// SideReleaser is a side car that wants to know when its buffer was read to the end (to be
// reused); the consumer must not touch it afterwards.
type SideReleaser interface {
	Release()
}

// Local reports whether the consumer is on this output's plane, so WriteSides may be used.
func (o *Output) Local() bool {
	o.mu.Lock()
	defer o.mu.Unlock()
	return o.local
}

// WriteSides writes the records of run whose bodies travel in the buffers' side cars: each
// buffer it fills gets one message, the run head and then the heads of the run's records
// that fit. The output is locked once for the run, which fills as many buffers as it
// needs; it blocks like WriteRecord. Only a Local output takes side-car records.
func (o *Output) WriteSides(ctx context.Context, run SideRun) error {
	n, size := run.Len(), max(run.SideBytes(), 1)
	o.mu.Lock()
	defer o.mu.Unlock()
	if !o.local {
		if err := o.usableLocked(); err != nil {
			return err
		}
		return fmt.Errorf("netplane: channel %s: a side-car record for a consumer on another plane", o.id)
	}
	heads, ends := run.Heads()
	for k := 0; k < n; {
		// A record larger than a buffer takes one of its own; unlike WriteRecord's it needs
		// no larger byte buffer.
		need := min(recordLen(MaxRunHeadBytes+int(ends[k+1]-ends[k]))+size, o.bufferBytes)
		if err := o.reserveLocked(ctx, need); err != nil {
			return err
		}
		// The buffer has room for record k: it goes in one message with those after it
		// that fit too.
		from, used := k, o.usedLocked()
		for k++; k < n; k++ {
			if used+recordLen(MaxRunHeadBytes+int(ends[k+1]-ends[from]))+(k+1-from)*size > o.bufferBytes {
				break
			}
		}
		o.runHead = run.AppendRunHead(o.runHead[:0], o.sideRecords, k-from)
		o.buf = append(binary.AppendUvarint(o.buf, uint64(len(o.runHead)+int(ends[k]-ends[from]))), o.runHead...)
		o.buf = append(o.buf, heads[ends[from]:ends[k]]...)
		o.sideBytes += (k - from) * size
		o.side = run.AppendSides(o.side, from, k)
		o.sideRecords += k - from
		o.appendedLocked()
	}
	return nil
}

// releaseSide tells a side car its buffer was read to the end.
func releaseSide(side any) {
	if r, ok := side.(SideReleaser); ok {
		r.Release()
	}
}
