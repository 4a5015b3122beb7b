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
	evRecords eventKind = iota // a run of records: batch.recs[rec : rec+n]
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
	rec   int // the first record's index in its batch's recs (evRecords)
	n     int // the number of records (evRecords)
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
	// keyed: the channel is of a HASH edge, its records carry their key groups (batch.kgs).
	keyed bool
}

// maxBatch bounds the records one channel hands to the task at once (a run of side-car
// records is taken whole, so a batch may exceed it by one run, at most a buffer's worth).
const maxBatch = 1024

// batch is what one channel hands to the task at once: events in order and the records
// they carry, decoded unboxed, with their timestamps.
type batch struct {
	events []event
	recs   stream.RecordBatch
	ts     []int64 // ts[i] is the timestamp of recs' record i
	kgs    []int32 // kgs[i] is the key group recs' record i came with (keyed channels only)
	from   *inputChan
}

// batches recycles a channel's batches.
type batches chan *batch

// get returns an empty batch of c: a processed one emptied here, on the channel's
// goroutine, so the task (the busier goroutine) only hands it back.
func (c *inputChan) get() *batch {
	select {
	case b := <-c.free:
		clear(b.events)
		b.events = b.events[:0]
		b.ts = b.ts[:0]
		b.kgs = b.kgs[:0]
		b.recs.Reset()
		return b
	default:
		b := &batch{events: make([]event, 0, 4), recs: c.spec.NewBatch(), ts: make([]int64, 0, maxBatch), from: c}
		if c.keyed {
			b.kgs = make([]int32, 0, maxBatch)
		}
		return b
	}
}

// release returns a batch the task has processed to its channel, which empties it when
// it takes it again (a batch the channel has no room for is left to the garbage collector).
func (b *batch) release() {
	select {
	case b.from.free <- b:
	default:
	}
}

// read forwards the channel's messages as events until it ends; after a barrier it waits
// until the task has aligned it (so records after the barrier stay in the channel). Events
// cross to the task in batches: as many records as the channel holds ready (up to
// maxBatch), so a busy channel costs one channel hop per batch and an idle one hands each
// record on at once. A run of records is one event, and the channel's lock is taken once
// per network buffer (netplane.Input.ReadRecords), not once per record.
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
	var (
		failed  error // a message that cannot be decoded
		stopped bool  // ctx ended while handing a batch on
		barrier bool  // a barrier was handed on: wait for its alignment
		full    bool  // the batch holds maxBatch records: hand it on
	)
	var bytesIn int64 // published once per network buffer
	// recordsAdded says whether to read on after records went into the batch.
	recordsAdded := func() bool {
		if len(b.ts) >= maxBatch {
			// Hand the full batch on after ReadRecords returned: when this was the
			// buffer's last record, its credit goes back first.
			full = true
			return false
		}
		return true
	}
	// record adds a record's payload, decoded, to the batch.
	record := func(payload []byte, ts int64, kg int32) bool {
		i, err := b.recs.Decode(payload)
		if err != nil {
			failed = fmt.Errorf("decoding a record from %s: %w", c.in.ID(), err)
			return false
		}
		b.ts = append(b.ts, ts)
		if c.keyed {
			b.kgs = append(b.kgs, kg)
		}
		b.addRecords(i, 1)
		return recordsAdded()
	}
	handle := func(raw []byte, side any) bool {
		bytesIn += int64(len(raw))
		switch { // the common cases: a record without a timestamp, keyed or not
		case len(raw) > 0 && raw[0] == tagRecord:
			return record(raw[1:], noTimestamp, noKeyGroup)
		case len(raw) > 1 && raw[0] == tagKeyedRecord && raw[1] < 0x80:
			return record(raw[2:], noTimestamp, int32(raw[1]))
		}
		m, err := parseMessage(raw)
		if err != nil {
			failed = fmt.Errorf("input %s: %w", c.in.ID(), err)
			return false
		}
		ev := event{input: c.idx, ts: m.ts}
		switch m.tag {
		case tagRecord, tagRecordTs, tagKeyedRecord, tagKeyedRecordTs:
			return record(m.payload, m.ts, m.kg)
		case tagSideRun: // many records in one message: parsed once, not once per record
			if err := c.takeSideRun(b, m, side); err != nil {
				failed = fmt.Errorf("input %s: %w", c.in.ID(), err)
				return false
			}
			return recordsAdded()
		case tagWatermark:
			ev.kind = evWatermark
		case tagBarrier, tagSavepointBarrier:
			ev.kind, ev.id, ev.sp = evBarrier, m.id, m.sp
			barrier = true
		case tagEndOfData:
			ev.kind = evEndOfData
		}
		if !send(ev) {
			stopped = true
			return false
		}
		return !barrier
	}
	for {
		err := c.in.ReadRecords(ctx, handle)
		if c.m.on && bytesIn > 0 {
			c.m.bytesIn.Add(bytesIn)
			bytesIn = 0
		}
		switch {
		case failed != nil:
			send(event{kind: evError, input: c.idx, err: failed})
			return
		case stopped:
			return
		case errors.Is(err, io.EOF):
			send(event{kind: evEnd, input: c.idx})
			return
		case err != nil:
			if ctx.Err() == nil {
				send(event{kind: evError, input: c.idx, err: fmt.Errorf("reading %s: %w", c.in.ID(), err)})
			}
			return
		}
		if full {
			full = false
			if !sendBatch() {
				return
			}
			continue
		}
		if barrier {
			barrier = false
			select {
			case <-c.resume:
			case <-ctx.Done():
				return
			}
			continue
		}
		// The buffer is read: hand on what was decoded unless more is ready at once.
		if !c.in.Ready() && !sendBatch() {
			return
		}
	}
}

// addRecords records that records i..i+n-1 of the batch were added: the batch's last event
// grows when it is a run of records, otherwise a run starts.
func (b *batch) addRecords(i, n int) {
	if k := len(b.events); k > 0 && b.events[k-1].kind == evRecords {
		b.events[k-1].n += n
	} else {
		b.events = append(b.events, event{kind: evRecords, input: b.from.idx, rec: i, n: n})
	}
}

// takeSideRun adds the records of side-car run m to b: their values from the buffer's side
// car, their timestamps and key groups from their headers in the run.
func (c *inputChan) takeSideRun(b *batch, m message, side any) error {
	n, heads := m.n, m.payload
	i, err := b.recs.TakeSides(side, m.first, n)
	if err != nil {
		return err
	}
	for range n {
		ts, kg := noTimestamp, int32(noKeyGroup)
		switch {
		case len(heads) > 0 && heads[0] == tagRecord: // the common cases
			heads = heads[1:]
		case len(heads) > 1 && heads[0] == tagKeyedRecord && heads[1] < 0x80:
			kg, heads = int32(heads[1]), heads[2:]
		default:
			if ts, kg, heads, err = nextRunHead(heads); err != nil {
				return err
			}
		}
		b.ts = append(b.ts, ts)
		if c.keyed {
			b.kgs = append(b.kgs, kg)
		}
	}
	if len(heads) != 0 {
		return fmt.Errorf("side-car run: %d bytes after its %d record headers", len(heads), n)
	}
	b.addRecords(i, n)
	return nil
}
