package stream

import (
	"time"
)

// WatermarkStrategy says how a source assigns event timestamps and generates watermarks.
type WatermarkStrategy[T any] struct {
	timestamp  func(T) int64
	outOfOrder time.Duration
	enabled    bool
}

// NoWatermarks keeps the timestamps the reader emits and generates no watermarks until
// the input ends (then MaxWatermark).
func NoWatermarks[T any]() WatermarkStrategy[T] { return WatermarkStrategy[T]{} }

// BoundedOutOfOrderness assigns timestamps with ts (milliseconds) and emits watermarks
// that trail the largest timestamp seen by maxOutOfOrder (Flink's
// forBoundedOutOfOrderness): watermark = maxTimestamp - maxOutOfOrder - 1.
func BoundedOutOfOrderness[T any](maxOutOfOrder time.Duration, ts func(T) int64) WatermarkStrategy[T] {
	return WatermarkStrategy[T]{timestamp: ts, outOfOrder: maxOutOfOrder, enabled: true}
}

// watermarkSpec is the type-erased strategy stored in the job.
type watermarkSpec struct {
	timestamp  func(any) int64
	outOfOrder int64
	enabled    bool
}

func (s WatermarkStrategy[T]) erase() watermarkSpec {
	spec := watermarkSpec{enabled: s.enabled, outOfOrder: s.outOfOrder.Milliseconds()}
	if s.timestamp != nil {
		f := s.timestamp
		spec.timestamp = func(v any) int64 { return f(v.(T)) }
	}
	return spec
}

// WatermarkGenerator is the per-subtask state of a watermark strategy.
type WatermarkGenerator interface {
	// Timestamp returns the event timestamp of a record the reader emitted with ts.
	Timestamp(v any, ts int64) int64
	// Current is the watermark to emit now (MinWatermark if none yet).
	Current() int64
}

func (s watermarkSpec) newGenerator() WatermarkGenerator {
	return &boundedGenerator{spec: s, maxTs: MinWatermark}
}

type boundedGenerator struct {
	spec  watermarkSpec
	maxTs int64
}

func (g *boundedGenerator) Timestamp(v any, ts int64) int64 {
	if g.spec.timestamp != nil {
		ts = g.spec.timestamp(v)
	}
	if ts > g.maxTs {
		g.maxTs = ts
	}
	return ts
}

func (g *boundedGenerator) Current() int64 {
	if !g.spec.enabled || g.maxTs == MinWatermark {
		return MinWatermark
	}
	return g.maxTs - g.spec.outOfOrder - 1
}
