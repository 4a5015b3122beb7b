package exec

import (
	"context"
	"fmt"
	"time"

	"github.com/hashicorp/go-multierror"

	"github.com/tidestream/tide/core/jobgraph"
	"github.com/tidestream/tide/stream"
	"github.com/tidestream/tide/tm/netplane"
)

// edgeOut is one outgoing edge of a subtask: an Output per consumer subtask it feeds.
type edgeOut struct {
	spec stream.VertexOutput
	outs []*netplane.Output
	// local[k]: outs[k]'s consumer is in this TaskManager, so typed records of a value type
	// reach it in the buffer's side car, unencoded (RouteRecords).
	local []bool
	p     int // consumer parallelism
	maxP  int // consumer maxParallelism
	// owners maps a key group to the consumer subtask owning it (the AM's placement);
	// nil: the equal split.
	owners []int32
	rr     int
}

// router is the collector at the end of a chain: it encodes records once and writes them
// (a header with the timestamp, then the encoding, copied once into the network buffer)
// to the consumer each edge picks (FORWARD: the one; HASH: by key group; REBALANCE: round
// robin). Watermarks and barriers go to every consumer. Typed records of a value type come
// in runs (RouteRecords) from the chain's typed output, which holds them back until the
// run is full or the subtask flushes it (flushStaged).
type router struct {
	ctx    context.Context
	edges  []*edgeOut
	buf    []byte   // a record header (without key group), a control message
	kbuf   []byte   // a keyed record's header
	enc    []byte   // a boxed record's encoding (Collect)
	hashes []uint64 // its key hash per edge (Collect)
	sent   int64
	m      *taskMetrics
	// stage is the chain's output holding records back (nil: none); flushed before every
	// control message.
	stage stream.StagedCollector
	// stageLimit is StageLimit: 1 with a buffer timeout of 0 (every record leaves at once).
	stageLimit int
	runs       runScratch
}

// stageRecords is how many records a typed output holds back before routing them: enough
// to take each output's lock once for many records, few enough to stay in the CPU's cache.
const stageRecords = 256

// Collect encodes a boxed record (the vertex's stream.OutputCollector hands typed records
// to Route instead).
func (r *router) Collect(v any, ts int64) error {
	if len(r.edges) == 0 {
		return nil
	}
	r.enc = r.edges[0].spec.Append(r.enc[:0], v)
	if len(r.hashes) != len(r.edges) {
		r.hashes = make([]uint64, len(r.edges))
	}
	for i, e := range r.edges {
		if e.spec.Kind == jobgraph.Hash {
			r.hashes[i] = e.spec.KeyHash(v)
		}
	}
	return r.Route(ts, r.enc, r.hashes)
}

// Route writes one encoded record to the consumer each edge picks; hashes[i] is the key
// hash of edges[i]'s record. On a HASH edge the record's header carries its key group.
func (r *router) Route(ts int64, payload []byte, hashes []uint64) error {
	if len(r.edges) == 0 {
		return nil
	}
	r.buf = r.buf[:0]
	bytes := 0
	for i, e := range r.edges {
		hdr := r.buf
		target := 0
		switch e.spec.Kind {
		case jobgraph.Hash:
			kg := jobgraph.KeyGroupFor(hashes[i], e.maxP)
			target = e.target(kg)
			r.kbuf = appendKeyedRecordHeader(r.kbuf[:0], ts, kg)
			hdr = r.kbuf
		case jobgraph.Rebalance:
			target = e.nextRoundRobin()
		}
		if len(hdr) == 0 {
			r.buf = appendRecordHeader(r.buf, ts)
			hdr = r.buf
		}
		o := e.outs[target]
		if err := o.WriteRecord(r.ctx, hdr, payload); err != nil {
			return fmt.Errorf("writing to %s: %w", o.ID(), err)
		}
		bytes += len(hdr) + len(payload)
	}
	r.sent++
	if r.m.on {
		r.m.countOut(1, bytes)
	}
	return nil
}

// target is the consumer subtask owning key group kg.
func (e *edgeOut) target(kg int) int {
	if e.owners != nil {
		return int(e.owners[kg])
	}
	return jobgraph.OperatorIndexFor(kg, e.maxP, e.p)
}

// nextRoundRobin is the consumer subtask a REBALANCE edge's next record goes to.
func (e *edgeOut) nextRoundRobin() int {
	t := e.rr
	if e.rr++; e.rr == len(e.outs) {
		e.rr = 0
	}
	return t
}

// StageLimit is how many records the chain's typed output may hold back
// (stream.SideRouter).
func (r *router) StageLimit() int { return r.stageLimit }

// setBufferTimeout makes a buffer timeout of 0 route every record at once.
func (r *router) setBufferTimeout(d time.Duration) {
	r.stageLimit = stageRecords
	if d == 0 {
		r.stageLimit = 1
	}
}

// flushStaged routes the records the chain's typed output holds back.
func (r *router) flushStaged() error {
	if r == nil || r.stage == nil {
		return nil
	}
	return r.stage.FlushStaged()
}

// sendOthers sends the partly filled buffer of every output but o that has a credit for
// it: o is about to block for credit, and the consumers of the others should not wait for
// the buffer timeout meanwhile (with one source feeding two keyed consumers, the one whose
// consumer is faster would otherwise sit idle for up to 100 ms each time the other stalls).
func (r *router) sendOthers(o *netplane.Output) {
	for _, e := range r.edges {
		for _, other := range e.outs {
			if other != o {
				other.SendIfCredit()
			}
		}
	}
}

// broadcast writes one control message to every consumer, after every record emitted
// before it, and flushes.
func (r *router) broadcast(msg []byte) error {
	if err := r.flushStaged(); err != nil {
		return err
	}
	if r.m.on {
		r.m.publish()
	}
	for _, e := range r.edges {
		for _, o := range e.outs {
			if err := o.Write(r.ctx, msg); err != nil {
				return fmt.Errorf("writing to %s: %w", o.ID(), err)
			}
			if err := o.Flush(r.ctx); err != nil {
				return fmt.Errorf("flushing %s: %w", o.ID(), err)
			}
		}
	}
	return nil
}

func (r *router) watermark(wm int64) error {
	r.buf = appendWatermark(r.buf[:0], wm)
	return r.broadcast(r.buf)
}

func (r *router) barrier(id, ts int64) error {
	r.buf = appendBarrier(r.buf[:0], id, ts)
	return r.broadcast(r.buf)
}

// endOfData tells every consumer that this subtask's input ended; outputs stay open for
// the barriers of the final checkpoint.
func (r *router) endOfData() error {
	r.buf = appendEndOfData(r.buf[:0])
	return r.broadcast(r.buf)
}

// close ends every output (end of partition for the consumers).
func (r *router) close(ctx context.Context) error {
	var errs *multierror.Error
	if err := r.flushStaged(); err != nil {
		errs = multierror.Append(errs, err)
	}
	for _, e := range r.edges {
		for _, o := range e.outs {
			if err := o.Close(ctx); err != nil {
				errs = multierror.Append(errs, fmt.Errorf("closing %s: %w", o.ID(), err))
			}
		}
	}
	return errs.ErrorOrNil()
}
