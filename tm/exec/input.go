package exec

import (
	"context"
	"errors"
	"fmt"
	"io"
	"runtime/debug"

	"github.com/tidestream/tide/stream"
	"github.com/tidestream/tide/tm/netplane"
)

type eventKind uint8

const (
	evRecord eventKind = iota
	evWatermark
	evBarrier
	evEndOfData // the producer's input ended; it still forwards barriers until it finishes
	evEnd       // end of partition: the producer finished, nothing follows
	evError
)

// event is one message from one input channel, decoded.
type event struct {
	kind  eventKind
	input int
	rec   int // a record's index in its batch's recs
	ts    int64
	id    int64
	sp    *SavepointTarget // a savepoint barrier's target
	err   error
}

// inputChan is one channel this subtask consumes.
type inputChan struct {
	idx    int
	in     *netplane.Input
	spec   stream.VertexInput
	resume chan struct{}
	m      *taskMetrics
	free   batches // batches the task processed, for reuse: room for as many as can be in flight
}

// maxBatch bounds the events one channel hands to the task at once.
const maxBatch = 256

// batch is what one channel hands to the task at once: events in order and the records
// they carry, decoded unboxed.
type batch struct {
	events []event
	recs   stream.RecordBatch
	from   *inputChan
}

// batches recycles a channel's batches.
type batches chan *batch

// get returns an empty batch of c.
func (c *inputChan) get() *batch {
	select {
	case b := <-c.free:
		return b
	default:
		return &batch{events: make([]event, 0, maxBatch), recs: c.spec.NewBatch(), from: c}
	}
}

// release returns a batch the task has processed to its channel (its references cleared).
func (b *batch) release() {
	clear(b.events)
	b.events = b.events[:0]
	b.recs.Reset()
	select {
	case b.from.free <- b:
	default:
	}
}

// read forwards the channel's messages as events until it ends; after a barrier it waits
// until the task has aligned it (so records after the barrier stay in the channel). Events
// cross to the task in batches: as many as the channel holds ready (up to maxBatch), so a
// busy channel costs one channel hop per batch and an idle one hands each record on at
// once.
func (c *inputChan) read(ctx context.Context, events chan<- *batch) {
	b := c.get()
	sendBatch := func() bool {
		if len(b.events) == 0 {
			return true
		}
		select {
		case events <- b:
			b = c.get()
			return true
		case <-ctx.Done():
			return false
		}
	}
	send := func(ev event) bool {
		b.events = append(b.events, ev)
		return sendBatch()
	}
	defer func() {
		if r := recover(); r != nil {
			send(event{kind: evError, input: c.idx, err: fmt.Errorf("panic decoding input %s: %v\n%s", c.in.ID(), r, debug.Stack())})
		}
	}()
	for {
		raw, more, err := c.in.NextMore(ctx)
		if errors.Is(err, io.EOF) {
			send(event{kind: evEnd, input: c.idx})
			return
		}
		if err != nil {
			if ctx.Err() == nil {
				send(event{kind: evError, input: c.idx, err: fmt.Errorf("reading %s: %w", c.in.ID(), err)})
			}
			return
		}
		if c.m.on {
			c.m.bytesIn.Add(int64(len(raw)))
		}
		m, err := parseMessage(raw)
		if err != nil {
			send(event{kind: evError, input: c.idx, err: fmt.Errorf("input %s: %w", c.in.ID(), err)})
			return
		}
		ev := event{input: c.idx, ts: m.ts}
		switch m.tag {
		case tagRecord, tagRecordTs:
			ev.kind = evRecord
			if ev.rec, err = b.recs.Decode(m.payload); err != nil {
				send(event{kind: evError, input: c.idx, err: fmt.Errorf("decoding a record from %s: %w", c.in.ID(), err)})
				return
			}
		case tagWatermark:
			ev.kind = evWatermark
		case tagBarrier, tagSavepointBarrier:
			ev.kind, ev.id, ev.sp = evBarrier, m.id, m.sp
		case tagEndOfData:
			ev.kind = evEndOfData
		}
		b.events = append(b.events, ev)
		if (ev.kind != evRecord || len(b.events) == maxBatch || !more) && !sendBatch() {
			return
		}
		if ev.kind == evBarrier {
			select {
			case <-c.resume:
			case <-ctx.Done():
				return
			}
		}
	}
}
