package stream

import (
	"encoding/binary"
	"fmt"

	"github.com/tidestream/tide/core/jobgraph"
	"github.com/tidestream/tide/state"
)

// ListState is a list of T per key (Flink's ListState), kept in the subtask's keyed state
// backend. The stored value is the concatenation of its elements, each
// uvarint(length) | [TTL timestamp] | encoded element, so Add appends without reading the
// list: on Pebble it is a merge (Pebble's default merger concatenates), on the heap an
// append. Create it in Open, restore it, write it in Snapshot (KeyedProcessFunction does
// all three).
type ListState[K Key, T any] struct {
	rt    Runtime
	be    state.Backend
	n     state.Nested
	own   bool
	name  string
	bname string
	codec Codec[T]
	ttl   TTLConfig
	kbuf  []byte
	vbuf  []byte
	ebuf  []byte
}

// NewListState opens list state name (unique within the operator) on rt's backend (a
// private heap backend when rt has none). codec nil: CodecFor[T].
func NewListState[K Key, T any](rt Runtime, name string, codec Codec[T], ttl TTLConfig) (*ListState[K, T], error) {
	if codec == nil {
		codec = CodecFor[T]()
	}
	be, own := rt.KeyedBackend, false
	if be == nil {
		be, own = state.NewHeap(), true
	}
	n, ok := be.(state.Nested)
	if !ok {
		return nil, fmt.Errorf("list state %q of operator %s: the %s backend keeps no list state", name, rt.OperatorID, be.Type())
	}
	return &ListState[K, T]{rt: rt, be: be, n: n, own: own, name: name, bname: BackendStateName(rt.OperatorID, name), codec: codec, ttl: ttl}, nil
}

func (s *ListState[K, T]) wrap(err error) error {
	if err == nil {
		return nil
	}
	return fmt.Errorf("list state %q of operator %s: %w", s.name, s.rt.OperatorID, err)
}

func (s *ListState[K, T]) kg(k K) int { return jobgraph.KeyGroupFor(HashKey(k), s.rt.MaxParallelism) }

// appendElem appends one stored element (stamped now) to dst.
func (s *ListState[K, T]) appendElem(dst []byte, v T) []byte {
	s.ebuf = s.codec.Append(s.ttl.stamp(s.ebuf[:0]), v)
	dst = binary.AppendUvarint(dst, uint64(len(s.ebuf)))
	return append(dst, s.ebuf...)
}

// Add appends v to k's list.
func (s *ListState[K, T]) Add(k K, v T) error {
	s.kbuf = appendKey(s.kbuf[:0], k)
	s.vbuf = s.appendElem(s.vbuf[:0], v)
	return s.wrap(s.n.Append(s.kg(k), s.bname, s.kbuf, s.vbuf))
}

// AddAll appends vs to k's list (one append).
func (s *ListState[K, T]) AddAll(k K, vs []T) error {
	if len(vs) == 0 {
		return nil
	}
	s.kbuf = appendKey(s.kbuf[:0], k)
	s.vbuf = s.vbuf[:0]
	for _, v := range vs {
		s.vbuf = s.appendElem(s.vbuf, v)
	}
	return s.wrap(s.n.Append(s.kg(k), s.bname, s.kbuf, s.vbuf))
}

// Update replaces k's list with vs (an empty vs clears it).
func (s *ListState[K, T]) Update(k K, vs []T) error {
	if len(vs) == 0 {
		return s.Clear(k)
	}
	s.kbuf = appendKey(s.kbuf[:0], k)
	s.vbuf = s.vbuf[:0]
	for _, v := range vs {
		s.vbuf = s.appendElem(s.vbuf, v)
	}
	return s.wrap(s.be.Put(s.kg(k), s.bname, s.kbuf, s.vbuf))
}

// Clear deletes k's list.
func (s *ListState[K, T]) Clear(k K) error {
	s.kbuf = appendKey(s.kbuf[:0], k)
	return s.wrap(s.be.Delete(s.kg(k), s.bname, s.kbuf))
}

// Get returns k's live elements in the order they were added (nil: none). Expired
// elements are dropped from the stored list; a read-and-write TTL renews the rest.
func (s *ListState[K, T]) Get(k K) ([]T, error) {
	s.kbuf = appendKey(s.kbuf[:0], k)
	kg := s.kg(k)
	b, ok, err := s.be.Get(kg, s.bname, s.kbuf)
	if err != nil || !ok {
		return nil, s.wrap(err)
	}
	var out []T
	dropped := false
	err = splitElems(b, func(elem []byte) error {
		payload, live := s.ttl.unwrap(elem)
		if !live {
			dropped = true
			return nil
		}
		v, err := s.codec.Decode(payload)
		if err != nil {
			return fmt.Errorf("key %v, element %d: %w", k, len(out), err)
		}
		out = append(out, v)
		return nil
	})
	if err != nil {
		return nil, s.wrap(err)
	}
	switch {
	case s.ttl.renewOnRead():
		return out, s.Update(k, out)
	case dropped:
		// Keep the live elements' own timestamps: dropping others renews nothing.
		live, any, err := s.liveElems(b)
		if err == nil && any {
			err = s.be.Put(kg, s.bname, s.kbuf, live)
		} else if err == nil {
			err = s.be.Delete(kg, s.bname, s.kbuf)
		}
		return out, s.wrap(err)
	}
	return out, nil
}

// splitElems calls fn for every stored element of a list value.
func splitElems(b []byte, fn func([]byte) error) error {
	for len(b) > 0 {
		n, w := binary.Uvarint(b)
		if w <= 0 || uint64(len(b)-w) < n {
			return fmt.Errorf("list state value: element of %d bytes cut short (%d left): %w", n, len(b), ErrShortBuffer)
		}
		if err := fn(b[w : w+int(n)]); err != nil {
			return err
		}
		b = b[w+int(n):]
	}
	return nil
}

// liveElems returns the stored list b without its expired elements (b itself when none
// expired or there is no TTL), and whether any element is left.
func (s *ListState[K, T]) liveElems(b []byte) ([]byte, bool, error) { return liveElems(s.ttl, b) }

// liveElems is ListState.liveElems with the TTL config ttl.
func liveElems(ttl TTLConfig, b []byte) ([]byte, bool, error) {
	if !ttl.ttlOn() {
		return b, len(b) > 0, splitElems(b, func([]byte) error { return nil })
	}
	var out []byte
	err := splitElems(b, func(elem []byte) error {
		if _, live := ttl.unwrap(elem); live {
			out = binary.AppendUvarint(out, uint64(len(elem)))
			out = append(out, elem...)
		}
		return nil
	})
	return out, len(out) > 0, err
}

// Snapshot writes the lists of the subtask's key groups without the elements expired at
// the barrier (also when an asynchronous checkpoint writes them later).
func (s *ListState[K, T]) Snapshot(w StateWriter) error {
	if !s.own && backendCovered(w, s.be) {
		return nil // the checkpoint takes the backend's entries itself
	}
	ttl := s.ttl.frozen()
	return s.wrap(snapshotView(w, s.be, func(r state.Reader, w StateWriter) error {
		return r.Iterate(s.bname, s.rt.KeyGroupStart, s.rt.KeyGroupEnd, func(kg int, key, value []byte) error {
			live, any, err := liveElems(ttl, value)
			if err != nil {
				return fmt.Errorf("key group %d: %w", kg, err)
			}
			if any {
				w.Keyed(s.name, kg, key, live)
			}
			return nil
		})
	}))
}

// Restore loads the lists of the subtask's key groups (r nil: fresh start).
func (s *ListState[K, T]) Restore(r StateReader) error {
	if r == nil {
		return nil
	}
	return s.wrap(r.Keyed(s.name, func(kg int, key, value []byte) error {
		if err := checkRestoredKey[K](key, kg, s.rt.MaxParallelism); err != nil {
			return err
		}
		live, any, err := s.liveElems(value)
		if err != nil || !any {
			return err
		}
		return s.be.Put(kg, s.bname, key, live)
	}))
}

// Close releases a private backend.
func (s *ListState[K, T]) Close() error {
	if s.own {
		return s.be.Close()
	}
	return nil
}
