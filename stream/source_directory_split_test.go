package stream

import (
	"encoding/binary"
	"testing"
)

// FuzzDecodeFileSplit: a directory split's data never panics the decoder, and what decodes
// encodes back to a split that decodes to the same range.
func FuzzDecodeFileSplit(f *testing.F) {
	f.Add(fileSplit{path: "/in/part-0.txt", start: 131072, end: 262144, pos: 140000}.encode().Data)
	f.Add(fileSplit{path: "/in/part-1.txt", end: -1}.encode().Data)
	f.Add(append(binary.AppendVarint(nil, 42), "/in/part-2.txt"...)) // before ranges
	f.Add([]byte{0x01, 0x80})
	f.Fuzz(func(t *testing.T, b []byte) {
		s, err := decodeFileSplit(Split{ID: "fuzz", Data: b})
		if err != nil {
			return
		}
		again, err := decodeFileSplit(s.encode())
		if err != nil || again != s {
			t.Fatalf("%+v encoded and decoded again: %+v, %v", s, again, err)
		}
	})
}
