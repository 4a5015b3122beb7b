package stream

import (
	"fmt"

	"github.com/tidestream/tide/core/jobgraph"
)

// KeyedState holds one value of type S per key, for the keys of the subtask's key groups.
// Operators snapshot it indexed by key group so any parallelism can restore it.
type KeyedState[K Key, S any] struct {
	name   string
	codec  Codec[S]
	values map[K]*S
	kbuf   []byte
	vbuf   []byte
}

// NewKeyedState creates empty state named name (unique within its operator).
func NewKeyedState[K Key, S any](name string, codec Codec[S]) *KeyedState[K, S] {
	return &KeyedState[K, S]{name: name, codec: codec, values: make(map[K]*S)}
}

// Get returns the key's value, or nil.
func (s *KeyedState[K, S]) Get(k K) *S { return s.values[k] }

// Put sets the key's value.
func (s *KeyedState[K, S]) Put(k K, v *S) { s.values[k] = v }

// Delete removes the key.
func (s *KeyedState[K, S]) Delete(k K) { delete(s.values, k) }

// Len is the number of keys.
func (s *KeyedState[K, S]) Len() int { return len(s.values) }

// Range calls fn for every key until it returns false.
func (s *KeyedState[K, S]) Range(fn func(K, *S) bool) {
	for k, v := range s.values {
		if !fn(k, v) {
			return
		}
	}
}

// Snapshot writes every entry under its key group.
func (s *KeyedState[K, S]) Snapshot(rt Runtime, w StateWriter) error {
	for k, v := range s.values {
		s.kbuf = appendKey(s.kbuf[:0], k)
		s.vbuf = s.codec.Append(s.vbuf[:0], *v)
		w.Keyed(s.name, jobgraph.KeyGroupFor(HashKey(k), rt.MaxParallelism), s.kbuf, s.vbuf)
	}
	return nil
}

// Restore loads the entries of the subtask's key groups.
func (s *KeyedState[K, S]) Restore(rt Runtime, r StateReader) error {
	if r == nil {
		return nil
	}
	return r.Keyed(s.name, func(kg int, key, value []byte) error {
		k, err := decodeKey[K](key)
		if err != nil {
			return fmt.Errorf("state %q, key group %d: %w", s.name, kg, err)
		}
		if got := jobgraph.KeyGroupFor(HashKey(k), rt.MaxParallelism); got != kg {
			return fmt.Errorf("state %q: key %v is stored in key group %d but hashes to %d (maxParallelism changed?)", s.name, k, kg, got)
		}
		v, err := s.codec.Decode(value)
		if err != nil {
			return fmt.Errorf("state %q, key %v: %w", s.name, k, err)
		}
		s.values[k] = &v
		return nil
	})
}
