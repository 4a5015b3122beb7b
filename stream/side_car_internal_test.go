package stream

import (
	"reflect"
	"testing"
)

// TestValueOnly: only types whose values share nothing another goroutine could change take
// the side car.
func TestValueOnly(t *testing.T) {
	type word struct {
		W string
		N int64
	}
	type nested struct {
		A [4]word
		B struct{ C complex128 }
		D uint8
	}
	type withSlice struct {
		W string
		B []byte
	}
	type withPtr struct{ P *int }
	type withIface struct{ V any }
	for _, c := range []struct {
		v    any
		want bool
	}{
		{int64(0), true}, {"", true}, {word{}, true}, {nested{}, true}, {[2]string{}, true}, {struct{}{}, true},
		{[]byte(nil), false}, {withSlice{}, false}, {withPtr{}, false}, {withIface{}, false},
		{map[string]int(nil), false}, {[1][]int{}, false}, {(*word)(nil), false}, {(chan int)(nil), false}, {func() {}, false},
	} {
		if got := valueOnly(reflect.TypeOf(c.v)); got != c.want {
			t.Errorf("valueOnly(%T) = %v, want %v", c.v, got, c.want)
		}
	}
}

// TestSideCodec: records of GobCodec always take the codec, so that a type gob encodes
// lossily, or not at all, behaves the same with every consumer.
func TestSideCodec(t *testing.T) {
	if sideCodec[int64](GobCodec[int64]{}) {
		t.Error("GobCodec records skip the codec")
	}
	if !sideCodec[int64](Int64Codec{}) || !sideCodec[string](StringCodec{}) {
		t.Error("a built-in codec's records do not skip it")
	}
}
