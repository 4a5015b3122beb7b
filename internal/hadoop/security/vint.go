package security

import (
	"fmt"
	"io"
	"math/bits"
)

// Hadoop's WritableUtils variable-length integers. They are not protobuf varints: values in
// -112..127 take one byte; otherwise a first byte in -113..-120 announces 1..8 big-endian
// bytes of a positive value, and one in -121..-128 announces 1..8 bytes of a negative value
// stored as its one's complement.

// readVLong decodes one WritableUtils vlong.
func readVLong(r io.ByteReader) (int64, error) {
	b, err := r.ReadByte()
	if err != nil {
		return 0, err
	}
	first := int8(b)
	if first >= -112 {
		return int64(first), nil
	}
	negative := first < -120
	n := -112 - int(first)
	if negative {
		n = -120 - int(first)
	}
	var v uint64
	for i := 0; i < n; i++ {
		c, err := r.ReadByte()
		if err != nil {
			if err == io.EOF {
				err = io.ErrUnexpectedEOF
			}
			return 0, err
		}
		v = v<<8 | uint64(c)
	}
	if negative {
		v = ^v
	}
	return int64(v), nil
}

// readVInt decodes a vlong that must fit an int32.
func readVInt(r io.ByteReader) (int32, error) {
	v, err := readVLong(r)
	if err != nil {
		return 0, err
	}
	if v < -1<<31 || v > 1<<31-1 {
		return 0, fmt.Errorf("vint %d out of int32 range", v)
	}
	return int32(v), nil
}

// appendVLong encodes v as a WritableUtils vlong.
func appendVLong(dst []byte, v int64) []byte {
	if v >= -112 && v <= 127 {
		return append(dst, byte(int8(v)))
	}
	u := uint64(v)
	lead := -112
	if v < 0 {
		u = ^u
		lead = -120
	}
	n := (bits.Len64(u) + 7) / 8
	dst = append(dst, byte(int8(lead-n)))
	for i := n - 1; i >= 0; i-- {
		dst = append(dst, byte(u>>(8*i)))
	}
	return dst
}
