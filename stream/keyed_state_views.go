package stream

import (
	"fmt"
	"time"

	"github.com/tidestream/tide/core/jobgraph"
	"github.com/tidestream/tide/state"
)

// TTLUpdate says which accesses renew an entry's time to live (Flink's StateTtlConfig.UpdateType).
type TTLUpdate uint8

const (
	// TTLOnCreateAndWrite: the entry expires TTL after it was last written.
	TTLOnCreateAndWrite TTLUpdate = iota
	// TTLOnReadAndWrite: the entry expires TTL after it was last read or written.
	TTLOnReadAndWrite
)

// String is Flink's UpdateType name.
func (u TTLUpdate) String() string {
	switch u {
	case TTLOnCreateAndWrite:
		return "OnCreateAndWrite"
	case TTLOnReadAndWrite:
		return "OnReadAndWrite"
	}
	return fmt.Sprintf("TTLUpdate(%d)", uint8(u))
}

// TTLConfig is state time to live (processing time). Expired entries are never returned
// and are deleted when met.
type TTLConfig struct {
	TTL    time.Duration // 0: entries never expire
	Update TTLUpdate
	// Now is the clock (default time.Now), for tests.
	Now func() time.Time
}

// ValueState is one value of type V per key, kept in the subtask's keyed state backend
// (heap or pebble), for user operators. Create it in Open with NewValueState, restore it
// with Restore and write it in Snapshot.
type ValueState[K Key, V any] struct {
	rt    Runtime
	be    state.Backend
	own   bool
	name  string
	bname string
	codec Codec[V]
	ttl   TTLConfig
	kbuf  []byte
	vbuf  []byte
}

// NewValueState opens value state name (unique within the operator) on rt's backend (a
// private heap backend when rt has none).
func NewValueState[K Key, V any](rt Runtime, name string, codec Codec[V], ttl TTLConfig) *ValueState[K, V] {
	if codec == nil {
		codec = CodecFor[V]()
	}
	if ttl.Now == nil {
		ttl.Now = time.Now
	}
	s := &ValueState[K, V]{rt: rt, be: rt.KeyedBackend, name: name, bname: BackendStateName(rt.OperatorID, name), codec: codec, ttl: ttl}
	if s.be == nil {
		s.be, s.own = state.NewHeap(), true
	}
	return s
}

func (s *ValueState[K, V]) kg(k K) int { return jobgraph.KeyGroupFor(HashKey(k), s.rt.MaxParallelism) }

// Value returns the key's value and whether it has one (not expired).
func (s *ValueState[K, V]) Value(k K) (V, bool, error) {
	var zero V
	s.kbuf = appendKey(s.kbuf[:0], k)
	kg := s.kg(k)
	b, ok, err := s.be.Get(kg, s.bname, s.kbuf)
	if err != nil || !ok {
		return zero, false, err
	}
	payload, live := s.ttl.unwrap(b)
	if !live {
		return zero, false, s.be.Delete(kg, s.bname, s.kbuf)
	}
	v, err := s.codec.Decode(payload)
	if err != nil {
		return zero, false, fmt.Errorf("value state %q, key %v: %w", s.name, k, err)
	}
	if s.ttl.renewOnRead() {
		return v, true, s.Update(k, v)
	}
	return v, true, nil
}

// Update sets the key's value (and renews its time to live).
func (s *ValueState[K, V]) Update(k K, v V) error {
	s.kbuf = appendKey(s.kbuf[:0], k)
	s.vbuf = s.codec.Append(s.ttl.stamp(s.vbuf[:0]), v)
	return s.be.Put(s.kg(k), s.bname, s.kbuf, s.vbuf)
}

// Clear removes the key's value.
func (s *ValueState[K, V]) Clear(k K) error {
	s.kbuf = appendKey(s.kbuf[:0], k)
	return s.be.Delete(s.kg(k), s.bname, s.kbuf)
}

// Snapshot writes the live entries of the subtask's key groups (with their timestamps):
// live at the barrier, also when an asynchronous checkpoint writes them later.
func (s *ValueState[K, V]) Snapshot(w StateWriter) error {
	if !s.own && backendCovered(w, s.be) {
		return nil // the checkpoint takes the backend's entries itself
	}
	ttl := s.ttl.frozen()
	return snapshotView(w, s.be, func(r state.Reader, w StateWriter) error {
		return r.Iterate(s.bname, s.rt.KeyGroupStart, s.rt.KeyGroupEnd, func(kg int, key, value []byte) error {
			if _, live := ttl.unwrap(value); live {
				w.Keyed(s.name, kg, key, value)
			}
			return nil
		})
	})
}

// Restore loads the entries of the subtask's key groups (r nil: fresh start).
func (s *ValueState[K, V]) Restore(r StateReader) error {
	if r == nil {
		return nil
	}
	return r.Keyed(s.name, func(kg int, key, value []byte) error {
		if _, live := s.ttl.unwrap(value); !live {
			return nil
		}
		return s.be.Put(kg, s.bname, key, value)
	})
}

// Close releases a private backend.
func (s *ValueState[K, V]) Close() error {
	if s.own {
		return s.be.Close()
	}
	return nil
}
