package stream

import (
	"fmt"
	"reflect"
	"slices"
	"sync"
	"unsafe"
)

// Records that cross to a consumer in the same TaskManager need not be encoded and decoded:
// the runtime hands them over in a side car of the network buffer (tm/netplane.Output.WriteSides),
// and the buffer carries only each record's header and its index in the side car. Only
// records of value types take this path: a type whose values hold no pointers, slices,
// maps, channels, functions or interfaces (strings are immutable, so they qualify), with a
// codec other than GobCodec (sideCodec). The consumer's goroutine then shares nothing with
// the producer's that either could still change; records of any other type are encoded as
// before, so a producer that reuses a slice it emitted cannot change what its consumer
// reads. A codec must decode what it encoded (Decode(Append(v)) == v): a consumer sees the
// same record either way.

// PendingRecords are records a typed output holds back, in the order they were emitted,
// until the runtime routes them all at once: it encodes those for consumers in another
// process and adds those for consumers in this one to side cars.
type PendingRecords interface {
	// Len is the number of records.
	Len() int
	// Timestamps are the records' timestamps.
	Timestamps() []int64
	// KeyHashes returns the records' key hashes for Outputs[i] in dst (grown as needed; nil
	// for an output that is not keyed). A router that needs no key group (one consumer, in
	// this process) does not ask, and the keyed operator consuming the records hashes them
	// on its own goroutine.
	KeyHashes(i int, dst []uint64) []uint64
	// Encode returns record j's encoding (valid until the next call).
	Encode(j int) []byte
	// AppendSides adds the records recs, in that order, to side (nil: start a side car) and
	// returns the side car.
	AppendSides(side any, recs []int32) any
	// SideBytes is the in-memory size of one record in a side car.
	SideBytes() int
}

// SideRouter is a RecordRouter that can hand records to consumers in this process
// unencoded; a typed output of a value type holds its records back and routes them through
// RouteRecords.
type SideRouter interface {
	RecordRouter
	// RouteRecords sends every record to the consumer each output picks.
	RouteRecords(recs PendingRecords) error
	// StageLimit is how many records a typed output may hold back before it routes them (1:
	// route every record at once).
	StageLimit() int
}

// StagedCollector is a Collector that may hold records back; the runtime calls
// FlushStaged at the end of every step of the subtask (a source's poll, a batch of input
// records, a call from the mailbox) and before it sends a watermark, a barrier or the end of
// the stream, so a record is never held past anything emitted after it.
type StagedCollector interface {
	Collector
	FlushStaged() error
}

// sideCar holds the records of one network buffer, unencoded. It goes back to its output's
// pool once the consumer read the buffer to its end (Release).
type sideCar[T any] struct {
	recs []T
	pool *sync.Pool
}

// Release empties the side car (dropping its references to records) for reuse.
func (s *sideCar[T]) Release() {
	clear(s.recs)
	s.recs = s.recs[:0]
	s.pool.Put(s)
}

// sideCodec reports whether records of codec c may skip it within one TaskManager: every
// codec but GobCodec, which drops unexported fields and fails on types it cannot encode, so
// its records would differ, or fail, only once a consumer is in another TaskManager.
func sideCodec[T any](c Codec[T]) bool {
	_, gob := c.(GobCodec[T])
	return !gob
}

// valueOnly reports whether values of t hold no references another goroutine could change
// through: no pointers, slices, maps, channels, functions or interfaces (strings are
// immutable).
func valueOnly(t reflect.Type) bool {
	switch t.Kind() {
	case reflect.Bool, reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Uintptr,
		reflect.Float32, reflect.Float64, reflect.Complex64, reflect.Complex128, reflect.String:
		return true
	case reflect.Array:
		return valueOnly(t.Elem())
	case reflect.Struct:
		for i := range t.NumField() {
			if !valueOnly(t.Field(i).Type) {
				return false
			}
		}
		return true
	default:
		return false
	}
}

// TakeSides appends records first..first+n-1 of side, a side car of this batch's record
// type, to the batch and returns the batch index of the first.
func (b *typedBatch[T]) TakeSides(side any, first, n int) (int, error) {
	s, ok := side.(*sideCar[T])
	if !ok {
		return 0, fmt.Errorf("side-car records of %T in a buffer whose side car is %T", *new(T), side)
	}
	if first < 0 || n < 0 || n > len(s.recs)-first {
		return 0, fmt.Errorf("side-car records %d..%d of a side car of %d", first, first+n-1, len(s.recs))
	}
	i := len(b.recs)
	b.recs = append(b.recs, s.recs[first:first+n]...)
	return i, nil
}

// sideOutput is a typedOutput's side of a SideRouter: the records held back until they
// are routed, encoded only for consumers in another process.
type sideOutput[T any] struct {
	o     *typedOutput[T]
	r     SideRouter // o's router
	recs  []T
	ts    []int64
	limit int       // recs routed once they are this many (SideRouter.StageLimit)
	pool  sync.Pool // of *sideCar[T]
}

// SideBytes is the in-memory size of a T (a string's bytes not counted: the side car shares
// them with the producer).
func (s *sideOutput[T]) SideBytes() int { return int(unsafe.Sizeof(*new(T))) }

func (s *sideOutput[T]) Len() int { return len(s.recs) }

func (s *sideOutput[T]) Timestamps() []int64 { return s.ts }

func (s *sideOutput[T]) Encode(j int) []byte {
	s.o.buf = s.o.codec.Append(s.o.buf[:0], s.recs[j])
	return s.o.buf
}

func (s *sideOutput[T]) KeyHashes(i int, dst []uint64) []uint64 {
	h := s.o.hash[i]
	if h == nil {
		return nil
	}
	dst = slices.Grow(dst[:0], len(s.recs))[:len(s.recs)]
	for j, v := range s.recs {
		dst[j] = h(v)
	}
	return dst
}

func (s *sideOutput[T]) AppendSides(side any, recs []int32) any {
	c, ok := side.(*sideCar[T])
	if !ok && side != nil {
		panic(fmt.Sprintf("stream: records of %T for a buffer whose side car is %T", *new(T), side))
	}
	if c == nil {
		c, _ = s.pool.Get().(*sideCar[T])
		if c == nil {
			c = &sideCar[T]{pool: &s.pool}
		}
	}
	for _, j := range recs {
		c.recs = append(c.recs, s.recs[j])
	}
	return c
}

// add holds v back; it reports whether the records held reached the limit.
func (s *sideOutput[T]) add(v T, ts int64) bool {
	s.recs, s.ts = append(s.recs, v), append(s.ts, ts)
	return len(s.recs) >= s.limit
}

// route routes the records held back, if any.
func (s *sideOutput[T]) route() error {
	if len(s.recs) == 0 {
		return nil
	}
	err := s.r.RouteRecords(s)
	clear(s.recs)
	s.recs, s.ts = s.recs[:0], s.ts[:0]
	s.limit = s.r.StageLimit()
	return err
}
