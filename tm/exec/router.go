package exec

import (
	"context"
	"fmt"

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
	// reach it in the buffer's side car, unencoded (RouteRecord).
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
// robin). Watermarks and barriers go to every consumer.
type router struct {
	ctx    context.Context
	edges  []*edgeOut
	buf    []byte   // a record header (without key group), a control message
	kbuf   []byte   // a keyed record's header
	enc    []byte   // a boxed record's encoding (Collect)
	hashes []uint64 // its key hash per edge (Collect)
	sent   int64
	m      *taskMetrics
}

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
	return r.route(ts, payload, nil, hashes)
}

// RouteRecord is Route of a typed record (stream.SideRouter): a consumer in this TaskManager
// gets it in the buffer's side car, unencoded; rec is encoded, once, only for the others.
func (r *router) RouteRecord(ts int64, rec stream.PendingRecord) error {
	return r.route(ts, nil, rec, nil)
}

// route writes one record, payload with its key hashes or rec, to the consumer each edge
// picks.
func (r *router) route(ts int64, payload []byte, rec stream.PendingRecord, hashes []uint64) error {
	if len(r.edges) == 0 {
		return nil
	}
	r.buf = r.buf[:0]
	bytes := 0
	for i, e := range r.edges {
		var hdr []byte
		target := 0
		switch e.spec.Kind {
		case jobgraph.Hash:
			if rec != nil && len(e.outs) == 1 && e.local[0] {
				// One consumer, in this TaskManager: the record needs no key group to be
				// routed, and its keyed operator hashes it on its own goroutine rather than
				// this one (records without a key group in their header).
				break
			}
			var h uint64
			if rec != nil {
				h = rec.KeyHash(i)
			} else {
				h = hashes[i]
			}
			kg := jobgraph.KeyGroupFor(h, e.maxP)
			if e.owners != nil {
				target = int(e.owners[kg])
			} else {
				target = jobgraph.OperatorIndexFor(kg, e.maxP, e.p)
			}
			r.kbuf = appendKeyedRecordHeader(r.kbuf[:0], ts, kg)
			hdr = r.kbuf
		case jobgraph.Rebalance:
			target = e.rr
			e.rr++
			if e.rr == len(e.outs) {
				e.rr = 0
			}
		}
		o := e.outs[target]
		var err error
		if rec != nil && e.local[target] {
			// The side-car header is built apart: r.buf is shared by the edges.
			if hdr == nil {
				r.kbuf = appendRecordHeader(r.kbuf[:0], ts)
				hdr = r.kbuf
			}
			hdr[0] |= tagSide
			err = o.WriteSide(r.ctx, hdr, rec)
			bytes += len(hdr)
		} else {
			if hdr == nil {
				if len(r.buf) == 0 {
					r.buf = appendRecordHeader(r.buf, ts)
				}
				hdr = r.buf
			}
			if payload == nil {
				payload = rec.Encode()
			}
			err = o.WriteRecord(r.ctx, hdr, payload)
			bytes += len(hdr) + len(payload)
		}
		if err != nil {
			return fmt.Errorf("writing to %s: %w", o.ID(), err)
		}
	}
	r.sent++
	if r.m.on {
		r.m.recordOut(bytes)
	}
	return nil
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

// broadcast writes one control message to every consumer and flushes.
func (r *router) broadcast(msg []byte) error {
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
	for _, e := range r.edges {
		for _, o := range e.outs {
			if err := o.Close(ctx); err != nil {
				errs = multierror.Append(errs, fmt.Errorf("closing %s: %w", o.ID(), err))
			}
		}
	}
	return errs.ErrorOrNil()
}
