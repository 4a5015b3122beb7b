package stream

import (
	"context"
)

// KeyedFuncs describe a keyed process operator: per-key state of type S and callbacks.
type KeyedFuncs[T any, K Key, S any, O any] struct {
	// OnRecord handles a record; state points at the key's state (the zero S for a new
	// key). Returning false deletes the key's state.
	OnRecord func(key K, state *S, v T, ts int64, emit func(O, int64)) (keep bool)
	// OnEnd, if set, is called for every key when the input ends (bounded jobs).
	OnEnd func(key K, state *S, emit func(O, int64))
	// StateCodec encodes S in checkpoints (default CodecFor[S]).
	StateCodec Codec[S]
}

// KeyedProcess adds a keyed operator with per-key state.
func KeyedProcess[T any, K Key, S any, O any](ks KeyedStream[T, K], name string, f KeyedFuncs[T, K, S, O]) DataStream[O] {
	if f.StateCodec == nil {
		f.StateCodec = CodecFor[S]()
	}
	key := ks.key
	return addKeyed[T, K, O](ks, name, func() Operator {
		return &keyedOp[T, K, S, O]{key: key, f: f}
	})
}

type keyedOp[T any, K Key, S any, O any] struct {
	BaseOperator
	key   func(T) K
	f     KeyedFuncs[T, K, S, O]
	rt    Runtime
	state *KeyedState[K, S]
	out   Collector
	typed typedCollector[O] // out, when it takes O unboxed
	outs  typedCache[O]
	err   error
	emitF func(O, int64) // o.emit, bound once: a method value per record would allocate
}

func (o *keyedOp[T, K, S, O]) Open(_ context.Context, rt Runtime, restored StateReader) error {
	o.rt = rt
	o.emitF = o.emit
	o.state = NewKeyedState[K, S]("value", o.f.StateCodec)
	return o.state.Restore(rt, restored)
}

func (o *keyedOp[T, K, S, O]) emit(v O, ts int64) {
	if o.err != nil {
		return
	}
	if o.typed != nil {
		o.err = o.typed.collectTyped(v, ts)
	} else {
		o.err = o.out.Collect(v, ts)
	}
}

func (o *keyedOp[T, K, S, O]) link(next Collector) Collector { return linkKeyed[T](o, next) }

func (o *keyedOp[T, K, S, O]) Process(v any, ts int64, out Collector) error {
	return o.processTyped(v.(T), ts, out)
}

func (o *keyedOp[T, K, S, O]) setOut(out Collector) {
	o.out, o.err = out, nil
	o.typed = o.outs.of(out)
}

func (o *keyedOp[T, K, S, O]) processTyped(rec T, ts int64, out Collector) error {
	k := o.key(rec)
	o.setOut(out)
	return o.process(k, o.state.keyGroup(k), rec, ts)
}

// processKeyedRange takes records with the key groups their sender computed (see
// KeyedState.carriedKeyGroup); out is looked up once for all of them.
func (o *keyedOp[T, K, S, O]) processKeyedRange(recs []T, ts []int64, kgs []int32, out Collector) error {
	o.setOut(out)
	for i := range recs {
		k := o.key(recs[i])
		kg, err := o.state.carriedKeyGroup(k, int(kgs[i]))
		if err != nil {
			return err
		}
		if err := o.process(k, kg, recs[i], ts[i]); err != nil {
			return err
		}
	}
	return nil
}

// process handles record rec of key k in key group kg, emitting into the output setOut
// selected.
func (o *keyedOp[T, K, S, O]) process(k K, kg int, rec T, ts int64) error {
	s := o.state.getIn(kg, k)
	fresh := s == nil
	if fresh {
		s = new(S)
	}
	keep := o.f.OnRecord(k, s, rec, ts, o.emitF)
	switch {
	case !keep && !fresh:
		o.state.deleteIn(kg, k)
	case keep && (fresh || !o.state.InPlace()):
		o.state.putIn(kg, k, s)
	}
	if o.err == nil {
		o.err = o.state.Err()
	}
	return o.err
}

func (o *keyedOp[T, K, S, O]) Snapshot(_ int64, w StateWriter) error {
	return o.state.Snapshot(o.rt, w)
}

func (o *keyedOp[T, K, S, O]) EndInput(_ context.Context, out Collector) error {
	if o.f.OnEnd == nil {
		return nil
	}
	o.setOut(out)
	o.state.Range(func(k K, s *S) bool {
		o.f.OnEnd(k, s, o.emitF)
		return o.err == nil
	})
	if o.err == nil {
		o.err = o.state.Err()
	}
	return o.err
}

// Reduce combines the records of each key with fn and emits every updated value (Flink's
// keyed reduce).
func Reduce[T any, K Key](ks KeyedStream[T, K], name string, fn func(acc, v T) T) DataStream[T] {
	out := KeyedProcess(ks, name, KeyedFuncs[T, K, reduceState[T], T]{
		OnRecord: func(_ K, s *reduceState[T], v T, ts int64, emit func(T, int64)) bool {
			if s.Set {
				s.V = fn(s.V, v)
			} else {
				s.Set, s.V = true, v
			}
			emit(s.V, ts)
			return true
		},
		StateCodec: reduceCodec[T]{inner: ks.in.node.codec.(erased[T]).c},
	})
	out.node.codec = ks.in.node.codec
	return out
}

type reduceState[T any] struct {
	Set bool
	V   T
}

type reduceCodec[T any] struct{ inner Codec[T] }

func (c reduceCodec[T]) Append(dst []byte, s reduceState[T]) []byte {
	return c.inner.Append(dst, s.V)
}
func (c reduceCodec[T]) Decode(src []byte) (reduceState[T], error) {
	v, err := c.inner.Decode(src)
	if err != nil {
		return reduceState[T]{}, err
	}
	return reduceState[T]{Set: true, V: v}, nil
}

// EmitMode says when a keyed aggregation emits its results.
type EmitMode uint8

const (
	// EmitEveryUpdate emits the key's result after every record.
	EmitEveryUpdate EmitMode = iota
	// EmitAtEnd emits every key's final result once, when the (bounded) input ends.
	EmitAtEnd
)

// Aggregator folds records of a key into an accumulator (starting from the zero A) and
// turns the accumulator into a result.
type Aggregator[T any, K Key, A any, O any] struct {
	Add    func(acc A, v T) A
	Result func(key K, acc A) O
	// AccCodec encodes the accumulator in checkpoints (default CodecFor[A]).
	AccCodec Codec[A]
}

// Aggregate folds each key's records with agg and emits results per mode.
func Aggregate[T any, K Key, A any, O any](ks KeyedStream[T, K], name string, agg Aggregator[T, K, A, O], mode EmitMode) DataStream[O] {
	f := KeyedFuncs[T, K, A, O]{
		OnRecord: func(k K, s *A, v T, ts int64, emit func(O, int64)) bool {
			*s = agg.Add(*s, v)
			if mode == EmitEveryUpdate {
				emit(agg.Result(k, *s), ts)
			}
			return true
		},
		StateCodec: agg.AccCodec,
	}
	if mode == EmitAtEnd {
		f.OnEnd = func(k K, s *A, emit func(O, int64)) { emit(agg.Result(k, *s), NoTimestamp) }
	}
	return KeyedProcess(ks, name, f)
}
