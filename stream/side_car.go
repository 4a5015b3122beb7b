package stream

import (
	"fmt"
	"reflect"
	"sync"
	"unsafe"
)

// Records that cross to a consumer in the same TaskManager need not be encoded and decoded:
// the runtime hands them over in a side car of the network buffer (tm/netplane.WriteSide),
// and the buffer carries only each record's header and its index in the side car. Only
// records of value types take this path: a type whose values hold no pointers, slices,
// maps, channels, functions or interfaces (strings are immutable, so they qualify), with a
// codec other than GobCodec (sideCodec). The consumer's goroutine then shares nothing with
// the producer's that either could still change; records of any other type are encoded as
// before, so a producer that reuses a slice it emitted cannot change what its consumer
// reads. A codec must decode what it encoded (Decode(Append(v)) == v): a consumer sees the
// same record either way.

// PendingRecord is the record a typed output is routing: the router encodes it for a
// consumer in another process and adds it to a side car for one in this process.
type PendingRecord interface {
	// Encode returns the record's encoding (valid until the next record), encoding it at
	// most once per record.
	Encode() []byte
	// AppendSide adds the record to side (nil: start a side car) and returns the side car
	// and the record's index in it.
	AppendSide(side any) (any, int)
	// KeyHash returns the record's key hash for Outputs[i] (0 for an output that is not
	// keyed). A router that needs no key group (one consumer, in this process) does not ask,
	// and the keyed operator consuming the record hashes it on its own goroutine.
	KeyHash(i int) uint64
	// SideBytes is the in-memory size of the record in a side car.
	SideBytes() int
}

// SideRouter is a RecordRouter that can hand records to consumers in this process
// unencoded; a typed output of a value type routes its records through RouteRecord.
type SideRouter interface {
	RecordRouter
	// RouteRecord sends rec to the consumer each output picks.
	RouteRecord(ts int64, rec PendingRecord) error
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

// TakeSide appends record idx of side, a side car of this batch's record type, to the
// batch and returns its index in the batch.
func (b *typedBatch[T]) TakeSide(side any, idx int) (int, error) {
	s, ok := side.(*sideCar[T])
	if !ok {
		return 0, fmt.Errorf("a side-car record of %T in a buffer whose side car is %T", *new(T), side)
	}
	if idx < 0 || idx >= len(s.recs) {
		return 0, fmt.Errorf("side-car record %d of a side car of %d", idx, len(s.recs))
	}
	b.recs = append(b.recs, s.recs[idx])
	return len(b.recs) - 1, nil
}

// sideOutput is a typedOutput's side of a SideRouter: the record being routed, encoded
// only when a consumer in another process needs it.
type sideOutput[T any] struct {
	o       *typedOutput[T]
	pending T
	encoded bool
	pool    sync.Pool // of *sideCar[T]
}

// SideBytes is the in-memory size of a T (a string's bytes not counted: the side car shares
// them with the producer).
func (s *sideOutput[T]) SideBytes() int { return int(unsafe.Sizeof(s.pending)) }

func (s *sideOutput[T]) Encode() []byte {
	if !s.encoded {
		s.o.buf = s.o.codec.Append(s.o.buf[:0], s.pending)
		s.encoded = true
	}
	return s.o.buf
}

func (s *sideOutput[T]) KeyHash(i int) uint64 {
	if h := s.o.hash[i]; h != nil {
		return h(s.pending)
	}
	return 0
}

func (s *sideOutput[T]) AppendSide(side any) (any, int) {
	c, ok := side.(*sideCar[T])
	if !ok && side != nil {
		panic(fmt.Sprintf("stream: a record of %T for a buffer whose side car is %T", s.pending, side))
	}
	if c == nil {
		c, _ = s.pool.Get().(*sideCar[T])
		if c == nil {
			c = &sideCar[T]{pool: &s.pool}
		}
	}
	c.recs = append(c.recs, s.pending)
	return c, len(c.recs) - 1
}
