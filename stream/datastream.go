package stream

import (
	"fmt"

	"github.com/tidestream/tide/core/jobgraph"
)

// DataStream is a stream of records of type T.
type DataStream[T any] struct {
	job  *Job
	node *node
}

// Job returns the job the stream belongs to.
func (s DataStream[T]) Job() *Job { return s.job }

// WithCodec sets the codec used when the stream's records leave their vertex.
func (s DataStream[T]) WithCodec(c Codec[T]) DataStream[T] {
	s.node.codec = erased[T]{c}
	return s
}

// WithParallelism sets the configured parallelism of the stream's last operator.
func (s DataStream[T]) WithParallelism(p int) DataStream[T] {
	if p < 1 {
		s.job.fail(fmt.Errorf("job %q, operator %q: parallelism %d, want >= 1", s.job.name, s.node.name, p))
		return s
	}
	s.node.parallelism = p
	return s
}

// WithUID sets the id under which the operator's state is stored (default: its name).
func (s DataStream[T]) WithUID(uid string) DataStream[T] {
	s.node.uid = slug(uid)
	return s
}

// FromSource adds a split source producing records of type T.
func FromSource[T any](j *Job, name string, src SplitSource, wm WatermarkStrategy[T]) DataStream[T] {
	n := j.add(&node{name: name, source: src, watermarks: wm.erase(), codec: erased[T]{CodecFor[T]()}, parallelism: j.parallelism, edge: jobgraph.Forward})
	return DataStream[T]{job: j, node: n}
}

func addOp[In, Out any](s DataStream[In], name string, edge jobgraph.EdgeKind, newOp func() Operator) DataStream[Out] {
	n := s.job.add(&node{name: name, newOp: newOp, input: s.node, edge: edge, codec: erased[Out]{CodecFor[Out]()}, parallelism: s.node.parallelism})
	return DataStream[Out]{job: s.job, node: n}
}

// Map applies fn to every record.
func Map[In, Out any](s DataStream[In], name string, fn func(In) Out) DataStream[Out] {
	return addOp[In, Out](s, name, jobgraph.Forward, func() Operator { return &mapOp[In, Out]{fn: fn} })
}

// Filter keeps the records for which keep returns true.
func Filter[T any](s DataStream[T], name string, keep func(T) bool) DataStream[T] {
	out := addOp[T, T](s, name, jobgraph.Forward, func() Operator { return &filterOp[T]{keep: keep} })
	out.node.codec = s.node.codec
	return out
}

// FlatMap calls fn for every record; fn emits any number of results through emit.
func FlatMap[In, Out any](s DataStream[In], name string, fn func(v In, emit func(Out))) DataStream[Out] {
	return addOp[In, Out](s, name, jobgraph.Forward, func() Operator { return &flatMapOp[In, Out]{fn: fn} })
}

// Rebalance spreads the stream round robin over the next operator's subtasks.
func Rebalance[T any](s DataStream[T], name string) DataStream[T] {
	out := addOp[T, T](s, name, jobgraph.Rebalance, func() Operator { return &mapOp[T, T]{fn: func(v T) T { return v }} })
	out.node.codec = s.node.codec
	return out
}

// Sink ends the stream in op (Print, FileSink, or any Operator that emits nothing).
func Sink[T any](s DataStream[T], name string, newOp func() Operator) {
	s.job.add(&node{name: name, newOp: newOp, input: s.node, edge: jobgraph.Forward, codec: s.node.codec, parallelism: s.node.parallelism})
}

type mapOp[In, Out any] struct {
	BaseOperator
	fn   func(In) Out
	outs typedCache[Out]
}

func (o *mapOp[In, Out]) Process(v any, ts int64, out Collector) error {
	return o.processTyped(v.(In), ts, out)
}

func (o *mapOp[In, Out]) processTyped(v In, ts int64, out Collector) error {
	return o.outs.collect(out, o.fn(v), ts)
}

func (o *mapOp[In, Out]) link(next Collector) Collector { return linkTyped[In](o, next) }

type filterOp[T any] struct {
	BaseOperator
	keep func(T) bool
	outs typedCache[T]
}

func (o *filterOp[T]) Process(v any, ts int64, out Collector) error {
	return o.processTyped(v.(T), ts, out)
}

func (o *filterOp[T]) processTyped(v T, ts int64, out Collector) error {
	if o.keep(v) {
		return o.outs.collect(out, v, ts)
	}
	return nil
}

func (o *filterOp[T]) link(next Collector) Collector { return linkTyped[T](o, next) }

type flatMapOp[In, Out any] struct {
	BaseOperator
	fn  func(In, func(Out))
	err error
	// The record being processed: emitF, bound once, emits into out (or typed, when out
	// takes Out unboxed) with ts (a closure per record would allocate).
	out   Collector
	typed typedCollector[Out]
	outs  typedCache[Out]
	ts    int64
	emitF func(Out)
}

func (o *flatMapOp[In, Out]) emit(r Out) {
	if o.err != nil {
		return
	}
	if o.typed != nil {
		o.err = o.typed.collectTyped(r, o.ts)
	} else {
		o.err = o.out.Collect(r, o.ts)
	}
}

func (o *flatMapOp[In, Out]) Process(v any, ts int64, out Collector) error {
	return o.processTyped(v.(In), ts, out)
}

func (o *flatMapOp[In, Out]) processTyped(v In, ts int64, out Collector) error {
	if o.emitF == nil {
		o.emitF = o.emit
	}
	o.err, o.out, o.ts = nil, out, ts
	o.typed = o.outs.of(out)
	o.fn(v, o.emitF)
	return o.err
}

func (o *flatMapOp[In, Out]) link(next Collector) Collector { return linkTyped[In](o, next) }
