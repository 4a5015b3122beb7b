package stream

import (
	"fmt"
	"reflect"
)

// The runtime's Collector takes records as `any`: boxing a record that is not pointer-shaped
// (a struct, a string, an int64 past 255) allocates. The operators built here know their
// record types, so between them (and into and out of the network codecs) records travel
// unboxed through typedCollector; `any` remains the path for user-written Operators and
// Collectors, which keep working unchanged.

// typedCollector is a Collector that also takes records of type T without boxing.
type typedCollector[T any] interface {
	Collector
	collectTyped(v T, ts int64) error
}

// typedProcessor is an operator that processes records of type T without boxing.
type typedProcessor[T any] interface {
	Operator
	processTyped(v T, ts int64, out Collector) error
}

// typedCache remembers the last Collector found to take T unboxed: the type assertion
// to a generic interface is a runtime itab lookup, worth doing once per collector rather
// than once per record.
type typedCache[T any] struct {
	out Collector // set only with tc: its dynamic type is one of this package's pointers
	tc  typedCollector[T]
}

// of returns out as a typedCollector[T], or nil when it takes only boxed records.
func (c *typedCache[T]) of(out Collector) typedCollector[T] {
	// c.out's dynamic type is comparable, so comparing cannot panic on a user Collector
	// of a non-comparable type (interfaces of different dynamic types compare unequal).
	if c.tc != nil && c.out == out {
		return c.tc
	}
	tc, ok := out.(typedCollector[T])
	if ok {
		c.out, c.tc = out, tc
	}
	return tc
}

// collect hands v to out, unboxed when out takes T.
func (c *typedCache[T]) collect(out Collector, v T, ts int64) error {
	if tc := c.of(out); tc != nil {
		return tc.collectTyped(v, ts)
	}
	return out.Collect(v, ts)
}

// linker is an operator that builds its own (typed) input link.
type linker interface {
	link(next Collector) Collector
}

// Link returns the Collector that feeds op, which emits into next: the runtime chains the
// operators of a vertex with it. Operators built by this package take their records
// unboxed from the operator before them; any other Operator gets them through Process.
func Link(op Operator, next Collector) Collector {
	if l, ok := op.(linker); ok {
		return l.link(next)
	}
	return &anyLink{op: op, next: next}
}

type anyLink struct {
	op   Operator
	next Collector
}

func (l *anyLink) Collect(v any, ts int64) error { return l.op.Process(v, ts, l.next) }

type typedLink[T any] struct {
	op   typedProcessor[T]
	next Collector
}

func (l *typedLink[T]) Collect(v any, ts int64) error { return l.op.Process(v, ts, l.next) }
func (l *typedLink[T]) collectTyped(v T, ts int64) error {
	return l.op.processTyped(v, ts, l.next)
}

func linkTyped[T any](op typedProcessor[T], next Collector) Collector {
	return &typedLink[T]{op: op, next: next}
}

// RecordRouter is the runtime's end of a chain: it sends each record, encoded once, to the
// consumers of the vertex's outputs.
type RecordRouter interface {
	// Collector takes records when the vertex has no typed encoder (it encodes them
	// through VertexOutput.Append and KeyHash).
	Collector
	// Route sends one record: payload is its encoding (valid only during the call) and
	// hashes[i] the key hash for Outputs[i] (0 for an output that is not keyed).
	Route(ts int64, payload []byte, hashes []uint64) error
}

// OutputCollector returns the Collector the last operator of the vertex emits into: records
// are encoded and key-hashed without boxing and handed to r.Route, or, with a SideRouter,
// held back and handed to r.RouteRecords in runs (the Collector is then a StagedCollector
// the runtime must flush). A vertex without outputs gets r itself.
func (v *Vertex) OutputCollector(r RecordRouter) Collector {
	if len(v.Outputs) == 0 {
		return r
	}
	return v.Outputs[0].codec.outputCollector(r, v.Outputs)
}

// typedOutput encodes and hashes records of type T for a RecordRouter.
type typedOutput[T any] struct {
	r      RecordRouter
	codec  Codec[T]
	hash   []func(T) uint64 // nil entries: not keyed
	hashes []uint64
	buf    []byte
	// side holds the records back and routes them in runs through r as a SideRouter,
	// encoded only for consumers in another process (nil: T is not a value type, or r is no
	// SideRouter; see side_car.go); the runtime flushes it (StagedCollector).
	side *sideOutput[T]
}

func (e erased[T]) outputCollector(r RecordRouter, outs []VertexOutput) Collector {
	o := &typedOutput[T]{r: r, codec: e.c, hash: make([]func(T) uint64, len(outs)), hashes: make([]uint64, len(outs))}
	for i, out := range outs {
		switch h := out.keyHashTyped.(type) {
		case nil:
			if kh := out.KeyHash; kh != nil {
				o.hash[i] = func(v T) uint64 { return kh(v) }
			}
		case func(T) uint64:
			o.hash[i] = h
		default:
			panic(fmt.Sprintf("stream: output %s hashes %T, records are %T", out.To, h, *new(T)))
		}
	}
	if sr, ok := r.(SideRouter); ok && sideCodec[T](e.c) && valueOnly(reflect.TypeFor[T]()) {
		o.side = &sideOutput[T]{o: o, r: sr, limit: sr.StageLimit()}
	}
	return o
}

func (o *typedOutput[T]) Collect(v any, ts int64) error { return o.collectTyped(v.(T), ts) }

// FlushStaged routes the records held back for a SideRouter (StagedCollector).
func (o *typedOutput[T]) FlushStaged() error {
	if o.side == nil {
		return nil
	}
	return o.side.route()
}

func (o *typedOutput[T]) collectTyped(v T, ts int64) error {
	if s := o.side; s != nil {
		if s.add(v, ts) {
			return s.route()
		}
		return nil
	}
	for i, h := range o.hash {
		if h != nil {
			o.hashes[i] = h(v)
		}
	}
	o.buf = o.codec.Append(o.buf[:0], v)
	return o.r.Route(ts, o.buf, o.hashes)
}

// RecordBatch holds records decoded from one input, unboxed, until the runtime hands them
// to the chain. It is used by one goroutine at a time.
type RecordBatch interface {
	// Decode decodes one record and returns its index in the batch.
	Decode(payload []byte) (int, error)
	// Emit hands record i to out.
	Emit(i int, ts int64, out Collector) error
	// EmitRange hands records from..to-1 to out in order, record i with timestamp ts[i]
	// (Emit for each, with out's typed path looked up once).
	EmitRange(from, to int, ts []int64, out Collector) error
	// EmitRangeKeyed is EmitRange for the records of a HASH input, record i with kgs[i],
	// the key group its sender routed it by (negative: none). A keyed operator at the head
	// of out's chain takes it instead of hashing the key again; any other gets EmitRange.
	EmitRangeKeyed(from, to int, ts []int64, kgs []int32, out Collector) error
	// TakeSides adds records first..first+n-1 of side, a side car a typed output of this
	// input's record type filled (side_car.go), in order, and returns the first one's index
	// in the batch.
	TakeSides(side any, first, n int) (int, error)
	// Reset empties the batch for reuse (dropping its references to records).
	Reset()
}

// NewBatch returns an empty RecordBatch decoding the input's records.
func (in VertexInput) NewBatch() RecordBatch { return in.codec.newBatch() }

type typedBatch[T any] struct {
	codec Codec[T]
	recs  []T
	outs  typedCache[T]
	// kout is the last Collector EmitRangeKeyed was given, kc it as a keyedCollector (nil:
	// it is none).
	kout Collector
	kc   keyedCollector[T]
}

func (e erased[T]) newBatch() RecordBatch { return &typedBatch[T]{codec: e.c} }

func (b *typedBatch[T]) Decode(payload []byte) (int, error) {
	v, err := b.codec.Decode(payload)
	if err != nil {
		return 0, err
	}
	b.recs = append(b.recs, v)
	return len(b.recs) - 1, nil
}

func (b *typedBatch[T]) Emit(i int, ts int64, out Collector) error {
	return b.outs.collect(out, b.recs[i], ts)
}

func (b *typedBatch[T]) EmitRange(from, to int, ts []int64, out Collector) error {
	recs, ts := b.recs[from:to], ts[from:to]
	if tc := b.outs.of(out); tc != nil {
		for i := range recs {
			if err := tc.collectTyped(recs[i], ts[i]); err != nil {
				return err
			}
		}
		return nil
	}
	for i := range recs {
		if err := out.Collect(recs[i], ts[i]); err != nil {
			return err
		}
	}
	return nil
}

func (b *typedBatch[T]) EmitRangeKeyed(from, to int, ts []int64, kgs []int32, out Collector) error {
	// Collectors given here are the runtime's chain heads (comparable pointers); b.kout
	// is set only after a successful assertion, so comparing cannot panic.
	if b.kout == nil || b.kout != out {
		kc, ok := out.(keyedCollector[T])
		if !ok {
			return b.EmitRange(from, to, ts, out)
		}
		b.kout, b.kc = out, kc
	}
	return b.kc.collectKeyedRange(b.recs[from:to], ts[from:to], kgs[from:to])
}

func (b *typedBatch[T]) Reset() {
	clear(b.recs)
	b.recs = b.recs[:0]
}
