package stream

import (
	"context"
	"errors"
)

// StateView is a keyed state view (ValueState, MapState, ListState) as an operator
// restores, snapshots and closes it.
type StateView interface {
	Restore(r StateReader) error
	Snapshot(w StateWriter) error
	Close() error
}

var (
	_ StateView = (*ValueState[string, int])(nil)
	_ StateView = (*MapState[string, string, int])(nil)
	_ StateView = (*ListState[string, int])(nil)
)

// KeyedProcessFunction is a keyed operator's logic with its own state views (Flink's
// KeyedProcessFunction): Open creates them on rt (NewValueState, NewMapState,
// NewListState, with state TTL if wanted) and returns them; the operator restores them
// before the first record (at any parallelism: each subtask gets its key groups), writes
// them into every checkpoint and savepoint, and closes them.
type KeyedProcessFunction[T any, K Key, O any] interface {
	Open(rt Runtime) ([]StateView, error)
	ProcessElement(key K, v T, ts int64, emit func(O, int64)) error
}

// ProcessKeyed adds a keyed operator running a KeyedProcessFunction; newFn makes one per
// subtask.
func ProcessKeyed[T any, K Key, O any](ks KeyedStream[T, K], name string, newFn func() KeyedProcessFunction[T, K, O]) DataStream[O] {
	key := ks.key
	return addKeyed[T, K, O](ks, name, func() Operator {
		return &keyedFuncOp[T, K, O]{key: key, fn: newFn()}
	})
}

type keyedFuncOp[T any, K Key, O any] struct {
	BaseOperator
	key   func(T) K
	fn    KeyedProcessFunction[T, K, O]
	views []StateView
	out   Collector
	typed typedCollector[O] // out, when it takes O unboxed
	outs  typedCache[O]
	err   error
	emitF func(O, int64)
}

func (o *keyedFuncOp[T, K, O]) Open(_ context.Context, rt Runtime, restored StateReader) error {
	o.emitF = o.emit
	views, err := o.fn.Open(rt)
	o.views = views
	if err != nil {
		return err
	}
	for _, v := range views {
		if err := v.Restore(restored); err != nil {
			return err
		}
	}
	return nil
}

func (o *keyedFuncOp[T, K, O]) emit(v O, ts int64) {
	if o.err != nil {
		return
	}
	if o.typed != nil {
		o.err = o.typed.collectTyped(v, ts)
	} else {
		o.err = o.out.Collect(v, ts)
	}
}

func (o *keyedFuncOp[T, K, O]) link(next Collector) Collector { return linkTyped[T](o, next) }

func (o *keyedFuncOp[T, K, O]) Process(v any, ts int64, out Collector) error {
	return o.processTyped(v.(T), ts, out)
}

func (o *keyedFuncOp[T, K, O]) processTyped(rec T, ts int64, out Collector) error {
	o.out, o.err = out, nil
	o.typed = o.outs.of(out)
	if err := o.fn.ProcessElement(o.key(rec), rec, ts, o.emitF); err != nil {
		return err
	}
	return o.err
}

func (o *keyedFuncOp[T, K, O]) Snapshot(_ int64, w StateWriter) error {
	for _, v := range o.views {
		if err := v.Snapshot(w); err != nil {
			return err
		}
	}
	return nil
}

func (o *keyedFuncOp[T, K, O]) Close() error {
	var errs []error
	for _, v := range o.views {
		errs = append(errs, v.Close())
	}
	o.views = nil
	return errors.Join(errs...)
}
