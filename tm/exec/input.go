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
	v     any
	ts    int64
	id    int64
	err   error
}

// inputChan is one channel this subtask consumes.
type inputChan struct {
	idx    int
	in     *netplane.Input
	spec   stream.VertexInput
	resume chan struct{}
	m      *taskMetrics
}

// maxBatch bounds the events one channel hands to the task at once.
const maxBatch = 256

// batches recycles the event slices the inputs hand to the task loop.
type batches chan []event

func (b batches) get() []event {
	select {
	case s := <-b:
		return s[:0]
	default:
		return make([]event, 0, maxBatch)
	}
}

// put returns a batch the task has processed (its references cleared).
func (b batches) put(s []event) {
	clear(s)
	select {
	case b <- s[:0]:
	default:
	}
}

// read forwards the channel's messages as events until it ends; after a barrier it waits
// until the task has aligned it (so records after the barrier stay in the channel). Events
// cross to the task in batches: as many as the channel holds ready (up to maxBatch), so a
// busy channel costs one channel hop per batch and an idle one hands each record on at
// once.
func (c *inputChan) read(ctx context.Context, events chan<- []event, free batches) {
	batch := free.get()
	sendBatch := func() bool {
		if len(batch) == 0 {
			return true
		}
		select {
		case events <- batch:
			batch = free.get()
			return true
		case <-ctx.Done():
			return false
		}
	}
	send := func(ev event) bool {
		batch = append(batch, ev)
		return sendBatch()
	}
	defer func() {
		if r := recover(); r != nil {
			send(event{kind: evError, input: c.idx, err: fmt.Errorf("panic decoding input %s: %v\n%s", c.in.ID(), r, debug.Stack())})
		}
	}()
	for {
		b, err := c.in.Next(ctx)
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
			c.m.bytesIn.Add(int64(len(b)))
		}
		m, err := parseMessage(b)
		if err != nil {
			send(event{kind: evError, input: c.idx, err: fmt.Errorf("input %s: %w", c.in.ID(), err)})
			return
		}
		ev := event{input: c.idx, ts: m.ts}
		switch m.tag {
		case tagRecord, tagRecordTs:
			ev.kind = evRecord
			if ev.v, err = c.spec.Decode(m.payload); err != nil {
				send(event{kind: evError, input: c.idx, err: fmt.Errorf("decoding a record from %s: %w", c.in.ID(), err)})
				return
			}
		case tagWatermark:
			ev.kind = evWatermark
		case tagBarrier:
			ev.kind, ev.id = evBarrier, m.id
		case tagEndOfData:
			ev.kind = evEndOfData
		}
		batch = append(batch, ev)
		if (ev.kind != evRecord || len(batch) == maxBatch || !c.in.Ready()) && !sendBatch() {
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
