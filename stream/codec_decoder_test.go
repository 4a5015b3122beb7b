package stream_test

import (
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"testing"

	"github.com/tidestream/tide/stream"
)

// TestDecoderReadsWhatAppendWrote: varints of one byte and of many, strings and floats
// come back as written; the first short read sticks (later reads give zero values).
func TestDecoderReadsWhatAppendWrote(t *testing.T) {
	ints := []int64{0, 1, -1, 63, -64, 64, -65, 300, math.MaxInt64, math.MinInt64}
	uints := []uint64{0, 1, 127, 128, 16383, 16384, math.MaxUint64}
	var b []byte
	for i := range ints {
		b = binary.AppendVarint(b, ints[i])
		b = stream.AppendString(b, "w")
	}
	for _, u := range uints {
		b = binary.AppendUvarint(b, u)
	}
	b = binary.LittleEndian.AppendUint64(b, math.Float64bits(2.5))
	d := stream.NewDecoder(b)
	for _, want := range ints {
		if got := d.Varint(); got != want {
			t.Fatalf("Varint %d, want %d", got, want)
		}
		if got := d.String(); got != "w" {
			t.Fatalf("String %q, want %q", got, "w")
		}
	}
	for _, want := range uints {
		if got := d.Uvarint(); got != want {
			t.Fatalf("Uvarint %d, want %d", got, want)
		}
	}
	if got := d.Float64(); got != 2.5 || d.Err() != nil || d.Remaining() != 0 {
		t.Fatalf("Float64 %v, err %v, %d bytes left; want 2.5, nil, 0", got, d.Err(), d.Remaining())
	}

	// A string whose length says more than is there: the error sticks, even for reads
	// whose next bytes would decode on their own.
	short := append(binary.AppendUvarint(nil, 5), 'a', 'b', 1, 2)
	d = stream.NewDecoder(short)
	if got := d.Bytes(); got != nil || !errors.Is(d.Err(), stream.ErrShortBuffer) {
		t.Fatalf("Bytes %q, err %v; want nil, ErrShortBuffer", got, d.Err())
	}
	if v, u := d.Varint(), d.Uvarint(); v != 0 || u != 0 || !errors.Is(d.Err(), stream.ErrShortBuffer) {
		t.Fatalf("after the error: Varint %d, Uvarint %d, err %v", v, u, d.Err())
	}
	d = stream.NewDecoder([]byte{0x80}) // a varint cut short
	if v := d.Varint(); v != 0 || !errors.Is(d.Err(), stream.ErrShortBuffer) {
		t.Fatalf("cut varint: %d, err %v", v, d.Err())
	}
}

var decodedSink string

// BenchmarkDecoder decodes records of a 4-byte string and a one-byte varint (WordCount's
// records between TaskManagers: a word of 1,000 and its count of 1).
func BenchmarkDecoder(b *testing.B) {
	bufs := make([][]byte, 1000)
	for i := range bufs {
		bufs[i] = binary.AppendVarint(stream.AppendString(nil, fmt.Sprintf("w%03d", i)), 1)
	}
	b.ReportAllocs()
	for i := 0; b.Loop(); i++ {
		d := stream.NewDecoder(bufs[i%len(bufs)])
		decodedSink = d.String()
		if d.Varint() != 1 || d.Err() != nil {
			b.Fatal("decoded wrong")
		}
	}
}
