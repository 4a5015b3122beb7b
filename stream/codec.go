package stream

import (
	"bytes"
	"encoding/binary"
	"encoding/gob"
	"errors"
	"fmt"
	"math"
	"reflect"
)

// Codec turns records of type T into bytes and back. Append must append the encoding of v
// to dst and return the extended slice; Decode must not retain src (it is reused), and must
// give back the record that was encoded: records of a value type that stay in one
// TaskManager skip the codec (side_car.go), and a consumer sees the same records either way.
type Codec[T any] interface {
	Append(dst []byte, v T) []byte
	Decode(src []byte) (T, error)
}

// ErrShortBuffer is returned by decoders when the input ends inside a value.
var ErrShortBuffer = errors.New("stream: short buffer")

// anyCodec is the type-erased form the runtime uses.
type anyCodec interface {
	appendAny(dst []byte, v any) []byte
	decodeAny(src []byte) (any, error)
	// outputCollector and newBatch are the unboxed paths (typed.go).
	outputCollector(r RecordRouter, outs []VertexOutput) Collector
	newBatch() RecordBatch
}

type erased[T any] struct{ c Codec[T] }

func (e erased[T]) appendAny(dst []byte, v any) []byte { return e.c.Append(dst, v.(T)) }
func (e erased[T]) decodeAny(src []byte) (any, error) {
	v, err := e.c.Decode(src)
	return v, err
}

// Int64Codec encodes an int64 as a zig-zag varint.
type Int64Codec struct{}

func (Int64Codec) Append(dst []byte, v int64) []byte { return binary.AppendVarint(dst, v) }
func (Int64Codec) Decode(src []byte) (int64, error) {
	v, n := binary.Varint(src)
	if n <= 0 {
		return 0, fmt.Errorf("decoding int64: %w", ErrShortBuffer)
	}
	return v, nil
}

// IntCodec encodes an int as a zig-zag varint.
type IntCodec struct{}

func (IntCodec) Append(dst []byte, v int) []byte { return binary.AppendVarint(dst, int64(v)) }
func (IntCodec) Decode(src []byte) (int, error) {
	v, n := binary.Varint(src)
	if n <= 0 {
		return 0, fmt.Errorf("decoding int: %w", ErrShortBuffer)
	}
	return int(v), nil
}

// Float64Codec encodes a float64 as 8 little-endian bytes.
type Float64Codec struct{}

func (Float64Codec) Append(dst []byte, v float64) []byte {
	return binary.LittleEndian.AppendUint64(dst, math.Float64bits(v))
}
func (Float64Codec) Decode(src []byte) (float64, error) {
	if len(src) < 8 {
		return 0, fmt.Errorf("decoding float64 from %d bytes: %w", len(src), ErrShortBuffer)
	}
	return math.Float64frombits(binary.LittleEndian.Uint64(src)), nil
}

// StringCodec encodes a string as its raw bytes (the frame carries the length).
type StringCodec struct{}

func (StringCodec) Append(dst []byte, v string) []byte { return append(dst, v...) }
func (StringCodec) Decode(src []byte) (string, error)  { return string(src), nil }

// BytesCodec encodes a byte slice as itself; Decode copies.
type BytesCodec struct{}

func (BytesCodec) Append(dst []byte, v []byte) []byte { return append(dst, v...) }
func (BytesCodec) Decode(src []byte) ([]byte, error)  { return bytes.Clone(src), nil }

// GobCodec encodes any gob-encodable value. It is convenient and slow (each record carries
// its type description); write a Codec by hand for hot streams.
type GobCodec[T any] struct{}

func (GobCodec[T]) Append(dst []byte, v T) []byte {
	var buf bytes.Buffer
	if err := gob.NewEncoder(&buf).Encode(&v); err != nil {
		panic(fmt.Sprintf("stream: gob-encoding %T: %v", v, err))
	}
	return append(dst, buf.Bytes()...)
}

func (GobCodec[T]) Decode(src []byte) (T, error) {
	var v T
	if err := gob.NewDecoder(bytes.NewReader(src)).Decode(&v); err != nil {
		return v, fmt.Errorf("gob-decoding %T: %w", v, err)
	}
	return v, nil
}

// CodecFor returns a fast codec for int, int64, float64, string and []byte, and GobCodec
// for every other type.
func CodecFor[T any]() Codec[T] {
	var zero T
	var c any
	switch any(zero).(type) {
	case int64:
		c = Int64Codec{}
	case int:
		c = IntCodec{}
	case float64:
		c = Float64Codec{}
	case string:
		c = StringCodec{}
	case []byte:
		c = BytesCodec{}
	default:
		if reflect.TypeFor[T]().Kind() == reflect.Interface {
			panic(fmt.Sprintf("stream: no codec for interface type %v; pass one explicitly", reflect.TypeFor[T]()))
		}
		return GobCodec[T]{}
	}
	return c.(Codec[T])
}

// Encoder helpers for hand-written codecs.

// AppendString appends a length-prefixed string.
func AppendString(dst []byte, s string) []byte {
	dst = binary.AppendUvarint(dst, uint64(len(s)))
	return append(dst, s...)
}

// Decoder reads values written with binary.AppendVarint/AppendUvarint and AppendString.
// The first error sticks; check Err once at the end.
type Decoder struct {
	buf []byte // nil once a read failed, so that every later read fails too
	err error
}

// NewDecoder reads from b.
func NewDecoder(b []byte) *Decoder { return &Decoder{buf: b} }

// fail records that a read failed; every later read fails too.
func (d *Decoder) fail() {
	if d.err == nil {
		d.err = ErrShortBuffer
	}
	d.buf = nil
}

// Varint reads a zig-zag varint.
func (d *Decoder) Varint() int64 {
	if b := d.buf; len(b) > 0 && b[0] < 0x80 { // one byte: the common case, inlined
		d.buf = b[1:]
		return int64(b[0]>>1) ^ -int64(b[0]&1)
	}
	return d.varint()
}

func (d *Decoder) varint() int64 {
	v, n := binary.Varint(d.buf)
	if n <= 0 {
		d.fail()
		return 0
	}
	d.buf = d.buf[n:]
	return v
}

// Uvarint reads an unsigned varint.
func (d *Decoder) Uvarint() uint64 {
	if b := d.buf; len(b) > 0 && b[0] < 0x80 { // one byte: the common case, inlined
		d.buf = b[1:]
		return uint64(b[0])
	}
	return d.uvarint()
}

func (d *Decoder) uvarint() uint64 {
	v, n := binary.Uvarint(d.buf)
	if n <= 0 {
		d.fail()
		return 0
	}
	d.buf = d.buf[n:]
	return v
}

// Bytes reads a length-prefixed byte string without copying.
func (d *Decoder) Bytes() []byte {
	n := d.Uvarint()
	if n > uint64(len(d.buf)) {
		d.fail()
		return nil
	}
	b := d.buf[:n]
	d.buf = d.buf[n:]
	return b
}

// String reads a length-prefixed string.
func (d *Decoder) String() string { return string(d.Bytes()) }

// Float64 reads 8 little-endian bytes.
func (d *Decoder) Float64() float64 {
	if len(d.buf) < 8 {
		d.fail()
		return 0
	}
	v := math.Float64frombits(binary.LittleEndian.Uint64(d.buf))
	d.buf = d.buf[8:]
	return v
}

// Remaining is the number of unread bytes.
func (d *Decoder) Remaining() int { return len(d.buf) }

// Err is the first decoding error, or nil.
func (d *Decoder) Err() error { return d.err }
