package examples

import (
	"github.com/tidestream/tide/stream"
)

// dedupFn is CheckableCount's --dedup step: it drops every number already seen for its
// key, remembering the numbers in MapState (key -> number -> seen). The source never
// repeats a number, so the answer stays the same, but the job then keeps one map entry
// per number in keyed state — on the pebble backend one stored key each — which every
// checkpoint, savepoint and rescale must carry exactly: a number lost from the map would
// not show, but one restored twice or into the wrong subtask would be counted twice or
// dropped, and the exact answer would change.
type dedupFn struct {
	seen *stream.MapState[int64, int64, seenMark]
}

// seenMark is the map's value: presence is all it says.
type seenMark struct{}

// seenCodec encodes seenMark in no bytes.
type seenCodec struct{}

func (seenCodec) Append(dst []byte, _ seenMark) []byte { return dst }
func (seenCodec) Decode([]byte) (seenMark, error)      { return seenMark{}, nil }

func (d *dedupFn) Open(rt stream.Runtime) ([]stream.StateView, error) {
	seen, err := stream.NewMapState[int64, int64, seenMark](rt, "seen", seenCodec{}, stream.TTLConfig{})
	if err != nil {
		return nil, err
	}
	d.seen = seen
	return []stream.StateView{seen}, nil
}

func (d *dedupFn) ProcessElement(key, n int64, ts int64, emit func(int64, int64)) error {
	dup, err := d.seen.Contains(key, n)
	if err != nil || dup {
		return err
	}
	if err := d.seen.Put(key, n, seenMark{}); err != nil {
		return err
	}
	emit(n, ts)
	return nil
}
