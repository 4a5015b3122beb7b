package stream

import (
	"context"
	"encoding/binary"
	"fmt"
	"time"
)

// TumblingWindow groups each key's records into fixed, non-overlapping event-time windows
// of the given size (aligned to the epoch) and emits agg's result for a window when the
// watermark passes its end. Records for windows the watermark already passed are dropped.
func TumblingWindow[T any, K Key, A any, O any](ks KeyedStream[T, K], name string, size time.Duration, agg Aggregator[T, K, A, O]) DataStream[O] {
	if size < time.Millisecond {
		ks.in.job.fail(fmt.Errorf("job %q, window %q: size %v, want >= 1ms", ks.in.job.name, name, size))
	}
	if agg.AccCodec == nil {
		agg.AccCodec = CodecFor[A]()
	}
	key := ks.key
	sizeMs := size.Milliseconds()
	return addKeyed[T, K, O](ks, name, func() Operator {
		return &windowOp[T, K, A, O]{key: key, size: sizeMs, agg: agg}
	})
}

// WindowResult is a convenience result type: the key, the window's [Start, End) in
// milliseconds, and a value.
type WindowResult[K Key, V any] struct {
	Key        K
	Start, End int64
	Value      V
}

type window[A any] struct {
	end int64
	acc A
}

type windowOp[T any, K Key, A any, O any] struct {
	BaseOperator
	key       func(T) K
	size      int64
	agg       Aggregator[T, K, A, O]
	rt        Runtime
	state     *KeyedState[K, []window[A]]
	watermark int64
	minEnd    int64
	dropped   int64
	outs      typedCache[O]
}

func (o *windowOp[T, K, A, O]) link(next Collector) Collector { return linkKeyed[T](o, next) }

func (o *windowOp[T, K, A, O]) Open(_ context.Context, rt Runtime, restored StateReader) error {
	o.rt = rt
	o.watermark = MinWatermark
	o.minEnd = MaxWatermark
	o.state = NewKeyedState[K, []window[A]]("windows", windowsCodec[A]{acc: o.agg.AccCodec})
	if err := o.state.Restore(rt, restored); err != nil {
		return err
	}
	o.state.Range(func(_ K, ws *[]window[A]) bool {
		for _, w := range *ws {
			o.minEnd = min(o.minEnd, w.end)
		}
		return true
	})
	return nil
}

// windowEnd returns the exclusive end of the window holding ts.
func (o *windowOp[T, K, A, O]) windowEnd(ts int64) int64 {
	start := ts - ((ts%o.size)+o.size)%o.size
	return start + o.size
}

func (o *windowOp[T, K, A, O]) Process(v any, ts int64, out Collector) error {
	return o.processTyped(v.(T), ts, out)
}

func (o *windowOp[T, K, A, O]) processTyped(rec T, ts int64, _ Collector) error {
	return o.process(rec, ts, -1)
}

// processKeyedRange takes records with the key groups their sender computed (see
// KeyedState.carriedKeyGroup).
func (o *windowOp[T, K, A, O]) processKeyedRange(recs []T, ts []int64, kgs []int32, _ Collector) error {
	for i := range recs {
		if err := o.process(recs[i], ts[i], int(kgs[i])); err != nil {
			return err
		}
	}
	return nil
}

// process handles a record; carried is the key group its sender computed (negative: none).
func (o *windowOp[T, K, A, O]) process(rec T, ts int64, carried int) error {
	if ts == NoTimestamp {
		return fmt.Errorf("window %s: record without event timestamp (assign one with a WatermarkStrategy on the source)", o.rt.OperatorID)
	}
	end := o.windowEnd(ts)
	if end-1 <= o.watermark {
		o.dropped++
		return nil
	}
	k := o.key(rec)
	kg, err := o.state.carriedKeyGroup(k, carried)
	if err != nil {
		return err
	}
	ws := o.state.getIn(kg, k)
	if ws == nil {
		ws = new([]window[A])
		o.state.putIn(kg, k, ws)
	}
	for i := range *ws {
		if (*ws)[i].end == end {
			(*ws)[i].acc = o.agg.Add((*ws)[i].acc, rec)
			o.state.writeBackIn(kg, k, ws)
			return o.state.Err()
		}
	}
	var zero A
	*ws = append(*ws, window[A]{end: end, acc: o.agg.Add(zero, rec)})
	o.state.writeBackIn(kg, k, ws)
	o.minEnd = min(o.minEnd, end)
	return o.state.Err()
}

func (o *windowOp[T, K, A, O]) Watermark(wm int64, out Collector) error {
	o.watermark = wm
	if o.minEnd == MaxWatermark || o.minEnd-1 > wm {
		return nil
	}
	next := MaxWatermark
	var err error
	var empty []K
	o.state.Range(func(k K, ws *[]window[A]) bool {
		kept := (*ws)[:0]
		for _, w := range *ws {
			if w.end-1 <= wm {
				if err = o.outs.collect(out, o.agg.Result(k, w.acc), w.end-1); err != nil {
					return false
				}
				continue
			}
			next = min(next, w.end)
			kept = append(kept, w)
		}
		*ws = kept
		if len(kept) == 0 {
			empty = append(empty, k)
		}
		return true
	})
	for _, k := range empty {
		o.state.Delete(k)
	}
	o.minEnd = next
	if err == nil {
		err = o.state.Err()
	}
	return err
}

func (o *windowOp[T, K, A, O]) Snapshot(_ int64, w StateWriter) error {
	return o.state.Snapshot(o.rt, w)
}

type windowsCodec[A any] struct{ acc Codec[A] }

func (c windowsCodec[A]) Append(dst []byte, ws []window[A]) []byte {
	dst = binary.AppendUvarint(dst, uint64(len(ws)))
	var tmp []byte
	for _, w := range ws {
		dst = binary.AppendVarint(dst, w.end)
		tmp = c.acc.Append(tmp[:0], w.acc)
		dst = binary.AppendUvarint(dst, uint64(len(tmp)))
		dst = append(dst, tmp...)
	}
	return dst
}

func (c windowsCodec[A]) Decode(src []byte) ([]window[A], error) {
	d := NewDecoder(src)
	n := d.Uvarint()
	if n > uint64(len(src)) {
		return nil, fmt.Errorf("decoding windows: %d windows in %d bytes: %w", n, len(src), ErrShortBuffer)
	}
	ws := make([]window[A], 0, n)
	for i := uint64(0); i < n && d.Err() == nil; i++ {
		end := d.Varint()
		b := d.Bytes()
		if d.Err() != nil {
			break
		}
		acc, err := c.acc.Decode(b)
		if err != nil {
			return nil, fmt.Errorf("decoding window ending %d: %w", end, err)
		}
		ws = append(ws, window[A]{end: end, acc: acc})
	}
	if d.Err() != nil {
		return nil, fmt.Errorf("decoding windows: %w", d.Err())
	}
	return ws, nil
}
