package stream

import (
	"fmt"

	"github.com/tidestream/tide/core/jobgraph"
	"github.com/tidestream/tide/state"
)

// MapState is a map from user keys UK to values UV per key K (Flink's MapState), kept in
// the subtask's keyed state backend. On Pebble every (key, user key) is one stored entry
// (key group | state | key | user key), so a map larger than memory is read and written
// entry by entry and cleared with one range deletion. Create it in Open, restore it, write
// it in Snapshot (KeyedProcessFunction does all three).
type MapState[K Key, UK Key, UV any] struct {
	rt    Runtime
	be    state.Backend
	n     state.Nested
	own   bool
	name  string
	bname string
	codec Codec[UV]
	ttl   TTLConfig
	kbuf  []byte
	sbuf  []byte
	vbuf  []byte
}

// NewMapState opens map state name (unique within the operator) on rt's backend (a
// private heap backend when rt has none). codec nil: CodecFor[UV].
func NewMapState[K Key, UK Key, UV any](rt Runtime, name string, codec Codec[UV], ttl TTLConfig) (*MapState[K, UK, UV], error) {
	if codec == nil {
		codec = CodecFor[UV]()
	}
	be, own := rt.KeyedBackend, false
	if be == nil {
		be, own = state.NewHeap(), true
	}
	n, ok := be.(state.Nested)
	if !ok {
		return nil, fmt.Errorf("map state %q of operator %s: the %s backend keeps no map state", name, rt.OperatorID, be.Type())
	}
	s := &MapState[K, UK, UV]{rt: rt, be: be, n: n, own: own, name: name, bname: BackendStateName(rt.OperatorID, name), codec: codec, ttl: ttl}
	if err := n.DeclareNested(s.bname); err != nil {
		return nil, s.wrap(err)
	}
	return s, nil
}

func (s *MapState[K, UK, UV]) wrap(err error) error {
	if err == nil {
		return nil
	}
	return fmt.Errorf("map state %q of operator %s: %w", s.name, s.rt.OperatorID, err)
}

func (s *MapState[K, UK, UV]) kg(k K) int {
	return jobgraph.KeyGroupFor(HashKey(k), s.rt.MaxParallelism)
}

// keys encodes k and uk into the buffers.
func (s *MapState[K, UK, UV]) keys(k K, uk UK) (kg int, key, sub []byte) {
	s.kbuf = appendKey(s.kbuf[:0], k)
	s.sbuf = appendKey(s.sbuf[:0], uk)
	return s.kg(k), s.kbuf, s.sbuf
}

// Get returns the value of uk in k's map, and whether it is there (and not expired).
func (s *MapState[K, UK, UV]) Get(k K, uk UK) (UV, bool, error) {
	var zero UV
	kg, key, sub := s.keys(k, uk)
	b, ok, err := s.n.GetEntry(kg, s.bname, key, sub)
	if err != nil || !ok {
		return zero, false, s.wrap(err)
	}
	payload, live := s.ttl.unwrap(b)
	if !live {
		return zero, false, s.wrap(s.n.DeleteEntry(kg, s.bname, key, sub))
	}
	v, err := s.codec.Decode(payload)
	if err != nil {
		return zero, false, s.wrap(fmt.Errorf("key %v, user key %v: %w", k, uk, err))
	}
	if s.ttl.renewOnRead() {
		return v, true, s.Put(k, uk, v)
	}
	return v, true, nil
}

// Contains says whether uk is in k's map (a read: it renews a read-and-write TTL).
func (s *MapState[K, UK, UV]) Contains(k K, uk UK) (bool, error) {
	kg, key, sub := s.keys(k, uk)
	b, ok, err := s.n.GetEntry(kg, s.bname, key, sub)
	if err != nil || !ok {
		return false, s.wrap(err)
	}
	if _, live := s.ttl.unwrap(b); !live {
		return false, s.wrap(s.n.DeleteEntry(kg, s.bname, key, sub))
	}
	if s.ttl.renewOnRead() {
		s.vbuf = s.ttl.stamp(s.vbuf[:0])
		s.vbuf = append(s.vbuf, b[ttlStampLen:]...)
		return true, s.wrap(s.n.PutEntry(kg, s.bname, key, sub, s.vbuf))
	}
	return true, nil
}

// Put sets uk's value in k's map (and renews its time to live).
func (s *MapState[K, UK, UV]) Put(k K, uk UK, v UV) error {
	kg, key, sub := s.keys(k, uk)
	s.vbuf = s.codec.Append(s.ttl.stamp(s.vbuf[:0]), v)
	return s.wrap(s.n.PutEntry(kg, s.bname, key, sub, s.vbuf))
}

// PutAll puts every entry of m into k's map.
func (s *MapState[K, UK, UV]) PutAll(k K, m map[UK]UV) error {
	for uk, v := range m {
		if err := s.Put(k, uk, v); err != nil {
			return err
		}
	}
	return nil
}

// Remove deletes uk from k's map.
func (s *MapState[K, UK, UV]) Remove(k K, uk UK) error {
	kg, key, sub := s.keys(k, uk)
	return s.wrap(s.n.DeleteEntry(kg, s.bname, key, sub))
}

// Clear deletes k's whole map (on Pebble one range deletion, whatever its size).
func (s *MapState[K, UK, UV]) Clear(k K) error {
	s.kbuf = appendKey(s.kbuf[:0], k)
	return s.wrap(s.n.DeleteEntries(s.kg(k), s.bname, s.kbuf))
}

// Entries calls fn for every live entry of k's map until fn returns false; the order is
// the backend's (Pebble: by encoded user key). Expired entries met are deleted; with a
// read-and-write TTL the visited entries are renewed. fn may Put and Remove entries of k.
func (s *MapState[K, UK, UV]) Entries(k K, fn func(UK, UV) bool) error {
	return s.iterate(k, true, func(uk UK, payload []byte) (bool, error) {
		v, err := s.codec.Decode(payload)
		if err != nil {
			return false, fmt.Errorf("key %v, user key %v: %w", k, uk, err)
		}
		return fn(uk, v), nil
	})
}

// Keys calls fn for every live user key of k's map until fn returns false.
func (s *MapState[K, UK, UV]) Keys(k K, fn func(UK) bool) error {
	return s.iterate(k, true, func(uk UK, _ []byte) (bool, error) { return fn(uk), nil })
}

// Values calls fn for every live value of k's map until fn returns false.
func (s *MapState[K, UK, UV]) Values(k K, fn func(UV) bool) error {
	return s.Entries(k, func(_ UK, v UV) bool { return fn(v) })
}

// IsEmpty says whether k's map has no live entry.
func (s *MapState[K, UK, UV]) IsEmpty(k K) (bool, error) {
	empty := true
	err := s.iterate(k, false, func(UK, []byte) (bool, error) {
		empty = false
		return false, nil
	})
	return empty, err
}

// errStop ends an iteration early.
var errStop = fmt.Errorf("stop")

// iterate visits k's live entries; read says the visit renews a read-and-write TTL.
func (s *MapState[K, UK, UV]) iterate(k K, read bool, fn func(UK, []byte) (bool, error)) error {
	key := appendKey(nil, k) // own buffer: fn may Put, which reuses s.kbuf
	kg := s.kg(k)
	var expired [][]byte
	var renew []byte
	err := s.n.IterateEntries(kg, s.bname, key, func(sub, value []byte) error {
		payload, live := s.ttl.unwrap(value)
		if !live {
			expired = append(expired, append([]byte(nil), sub...))
			return nil
		}
		uk, err := decodeKey[UK](sub)
		if err != nil {
			return fmt.Errorf("key %v: user key: %w", k, err)
		}
		if read && s.ttl.renewOnRead() {
			renew = append(s.ttl.stamp(renew[:0]), payload...)
			if err := s.n.PutEntry(kg, s.bname, key, sub, renew); err != nil {
				return err
			}
		}
		more, err := fn(uk, payload)
		if err == nil && !more {
			err = errStop
		}
		return err
	})
	if err == errStop {
		err = nil
	}
	for _, sub := range expired {
		if err != nil {
			break
		}
		err = s.n.DeleteEntry(kg, s.bname, key, sub)
	}
	return s.wrap(err)
}

// Snapshot writes the live entries of the subtask's key groups (live at the barrier, also
// when an asynchronous checkpoint writes them later).
func (s *MapState[K, UK, UV]) Snapshot(w StateWriter) error {
	if !s.own && backendCovered(w, s.be) {
		return nil // the checkpoint takes the backend's entries itself
	}
	ttl := s.ttl.frozen()
	return s.wrap(snapshotView(w, s.be, func(r state.Reader, w StateWriter) error {
		return r.Iterate(s.bname, s.rt.KeyGroupStart, s.rt.KeyGroupEnd, func(kg int, key, value []byte) error {
			if _, live := ttl.unwrap(value); live {
				w.Keyed(s.name, kg, key, value)
			}
			return nil
		})
	}))
}

// Restore loads the live entries of the subtask's key groups (r nil: fresh start).
func (s *MapState[K, UK, UV]) Restore(r StateReader) error {
	if r == nil {
		return nil
	}
	return s.wrap(r.Keyed(s.name, func(kg int, ek, value []byte) error {
		key, sub, err := state.SplitEntryKey(ek)
		if err != nil {
			return fmt.Errorf("key group %d: %w", kg, err)
		}
		if err := checkRestoredKey[K](key, kg, s.rt.MaxParallelism); err != nil {
			return err
		}
		if _, live := s.ttl.unwrap(value); !live {
			return nil
		}
		return s.n.PutEntry(kg, s.bname, key, sub, value)
	}))
}

// Close releases a private backend.
func (s *MapState[K, UK, UV]) Close() error {
	if s.own {
		return s.be.Close()
	}
	return nil
}

// checkRestoredKey decodes a restored key and checks it belongs to key group kg.
func checkRestoredKey[K Key](key []byte, kg, maxParallelism int) error {
	k, err := decodeKey[K](key)
	if err != nil {
		return fmt.Errorf("key group %d: %w", kg, err)
	}
	if got := jobgraph.KeyGroupFor(HashKey(k), maxParallelism); got != kg {
		return fmt.Errorf("key %v is stored in key group %d but hashes to %d (maxParallelism changed?)", k, kg, got)
	}
	return nil
}
