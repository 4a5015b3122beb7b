package stream

import (
	"bytes"
	"fmt"

	"github.com/tidestream/tide/core/jobgraph"
	"github.com/tidestream/tide/state"
)

// KeyedState holds one value of type S per key, for the keys of the subtask's key groups.
// Operators snapshot it indexed by key group so any parallelism can restore it.
//
// With the hashmap backend (Runtime.KeyedBackend nil or of type hashmap) values live in a
// copy-on-write table of Go objects (state.KeyGroupMap, one map per key group) and Get
// returns a pointer into it: changes through the pointer are the state. An asynchronous
// checkpoint takes a snapshot of the table at the barrier and encodes it on the upload's
// goroutine; meanwhile a value the snapshot shares is copied (a codec round trip) the
// first time Get or Range hands it out. With a disk backend (pebble) values are encoded
// into the backend: Get returns a decoded copy and the caller stores changes back with
// WriteBack (a no-op on the heap).
type KeyedState[K Key, S any] struct {
	name   string
	codec  Codec[S]
	values *state.KeyGroupMap[K, S]
	// be is the disk backend (nil: object map); bname is the state's name in it.
	be    state.Backend
	bname string
	rt    Runtime
	// kgStart..kgEnd is rt's range of key groups, for the hot path.
	kgStart, kgEnd int
	err            error
	kbuf           []byte
	vbuf           []byte
}

// NewKeyedState creates empty state named name (unique within its operator).
func NewKeyedState[K Key, S any](name string, codec Codec[S]) *KeyedState[K, S] {
	s := &KeyedState[K, S]{name: name, codec: codec, values: &state.KeyGroupMap[K, S]{}}
	s.values.Copy = s.copyValue
	return s
}

// copyValue deep-copies a value a snapshot shares (Codec: Append, then Decode).
func (s *KeyedState[K, S]) copyValue(v *S) (*S, error) {
	s.vbuf = s.codec.Append(s.vbuf[:0], *v)
	c, err := s.codec.Decode(s.vbuf)
	if err != nil {
		return nil, fmt.Errorf("keyed state %q: copying a value a checkpoint shares: %w", s.name, err)
	}
	return &c, nil
}

// bind selects the storage from the runtime (once, before the first access).
func (s *KeyedState[K, S]) bind(rt Runtime) {
	s.rt = rt
	s.kgStart, s.kgEnd = rt.KeyGroupStart, rt.KeyGroupEnd
	if be := rt.KeyedBackend; be != nil && be.Type() != state.Hashmap {
		s.be, s.bname, s.values = be, BackendStateName(rt.OperatorID, s.name), nil
	}
}

// BackendStateName is the name under which an operator's state is kept in a state backend
// (state names are unique within an operator, operator ids within a job).
func BackendStateName(operatorID, name string) string { return operatorID + "/" + name }

// Err is the first error of the disk backend (nil on the heap); an operator that saw a
// nil Get or a skipped write returns it.
func (s *KeyedState[K, S]) Err() error { return s.err }

func (s *KeyedState[K, S]) fail(err error) {
	if s.err == nil && err != nil { // inlined: called on every access, err almost always nil
		s.setErr(err)
	}
}

func (s *KeyedState[K, S]) setErr(err error) {
	s.err = fmt.Errorf("keyed state %q of operator %s: %w", s.name, s.rt.OperatorID, err)
}

func (s *KeyedState[K, S]) keyGroup(k K) int {
	return jobgraph.KeyGroupFor(HashKey(k), max(s.rt.MaxParallelism, 1))
}

// carriedKeyGroup returns k's key group given kg, the one the record's sender computed
// for it (see key_group_carried.go): kg itself when this subtask owns it, else k's hash (a
// record without a carried group, kg < 0, or one routed here by another assignment).
// With VerifyCarriedKeyGroups on, a carried group k does not hash to is an error.
func (s *KeyedState[K, S]) carriedKeyGroup(k K, kg int) (int, error) {
	if kg >= s.kgStart && kg <= s.kgEnd && !verifyCarried.Load() {
		return kg, nil // the common case, inlined
	}
	return s.checkCarried(k, kg)
}

func (s *KeyedState[K, S]) checkCarried(k K, kg int) (int, error) {
	want := s.keyGroup(k)
	if s.rt.OwnsKeyGroup(kg) && want != kg {
		return 0, fmt.Errorf("keyed state %q of operator %s: key %v came with key group %d but hashes to %d (maxParallelism %d)",
			s.name, s.rt.OperatorID, k, kg, want, s.rt.MaxParallelism)
	}
	return want, nil
}

// Get returns the key's value, or nil.
func (s *KeyedState[K, S]) Get(k K) *S { return s.getIn(s.keyGroup(k), k) }

// getIn is Get for a key whose key group kg is known.
func (s *KeyedState[K, S]) getIn(kg int, k K) *S {
	if s.be == nil {
		v, err := s.values.Get(kg, k)
		s.fail(err)
		return v
	}
	s.kbuf = appendKey(s.kbuf[:0], k)
	b, ok, err := s.be.Get(kg, s.bname, s.kbuf)
	if err != nil || !ok {
		s.fail(err)
		return nil
	}
	v, err := s.codec.Decode(b)
	if err != nil {
		s.fail(fmt.Errorf("key %v: %w", k, err))
		return nil
	}
	return &v
}

// Put sets the key's value.
func (s *KeyedState[K, S]) Put(k K, v *S) { s.putIn(s.keyGroup(k), k, v) }

// putIn is Put for a key whose key group kg is known.
func (s *KeyedState[K, S]) putIn(kg int, k K, v *S) {
	if s.be == nil {
		s.values.Put(kg, k, v)
		return
	}
	s.kbuf = appendKey(s.kbuf[:0], k)
	s.vbuf = s.codec.Append(s.vbuf[:0], *v)
	s.fail(s.be.Put(kg, s.bname, s.kbuf, s.vbuf))
}

// WriteBack stores a value obtained from Get and changed in place (a no-op on the heap,
// where the pointer is the state).
func (s *KeyedState[K, S]) WriteBack(k K, v *S) {
	if s.be != nil {
		s.Put(k, v)
	}
}

// writeBackIn is WriteBack for a key whose key group kg is known.
func (s *KeyedState[K, S]) writeBackIn(kg int, k K, v *S) {
	if s.be != nil {
		s.putIn(kg, k, v)
	}
}

// InPlace says whether changes through Get's pointer are the state (heap) or need WriteBack.
func (s *KeyedState[K, S]) InPlace() bool { return s.be == nil }

// Delete removes the key.
func (s *KeyedState[K, S]) Delete(k K) { s.deleteIn(s.keyGroup(k), k) }

// deleteIn is Delete for a key whose key group kg is known.
func (s *KeyedState[K, S]) deleteIn(kg int, k K) {
	if s.be == nil {
		s.values.Delete(kg, k)
		return
	}
	s.kbuf = appendKey(s.kbuf[:0], k)
	s.fail(s.be.Delete(kg, s.bname, s.kbuf))
}

// Len is the number of keys (a scan on a disk backend).
func (s *KeyedState[K, S]) Len() int {
	if s.be == nil {
		return s.values.Len()
	}
	n := 0
	s.fail(s.be.Iterate(s.bname, s.rt.KeyGroupStart, s.rt.KeyGroupEnd, func(int, []byte, []byte) error {
		n++
		return nil
	}))
	return n
}

// Range calls fn for every key until it returns false. fn may change the value in place;
// on a disk backend a changed value is written back.
func (s *KeyedState[K, S]) Range(fn func(K, *S) bool) {
	if s.be == nil {
		s.fail(s.values.Range(func(_ int, k K, v *S) (bool, error) { return fn(k, v), nil }))
		return
	}
	stop := fmt.Errorf("stop")
	var enc []byte
	err := s.be.Iterate(s.bname, s.rt.KeyGroupStart, s.rt.KeyGroupEnd, func(kg int, key, value []byte) error {
		k, err := decodeKey[K](key)
		if err != nil {
			return fmt.Errorf("key group %d: %w", kg, err)
		}
		v, err := s.codec.Decode(value)
		if err != nil {
			return fmt.Errorf("key %v: %w", k, err)
		}
		more := fn(k, &v)
		if enc = s.codec.Append(enc[:0], v); !bytes.Equal(enc, value) {
			if err := s.be.Put(kg, s.bname, key, enc); err != nil {
				return err
			}
		}
		if !more {
			return stop
		}
		return nil
	})
	if err != stop {
		s.fail(err)
	}
}

// Snapshot writes every entry under its key group.
func (s *KeyedState[K, S]) Snapshot(rt Runtime, w StateWriter) error {
	if s.be != nil && backendCovered(w, s.be) {
		return s.err // the checkpoint takes the backend's entries itself
	}
	if s.be != nil {
		err := s.be.Iterate(s.bname, rt.KeyGroupStart, rt.KeyGroupEnd, func(kg int, key, value []byte) error {
			w.Keyed(s.name, kg, key, value)
			return nil
		})
		if err != nil {
			return fmt.Errorf("keyed state %q: snapshot: %w", s.name, err)
		}
		return s.err
	}
	// Copy-on-write: a snapshot of the table at the barrier, encoded by the upload when
	// the writer takes it asynchronously, else now.
	snap := s.values.Snapshot()
	write := func(w StateWriter) error {
		var kbuf, vbuf []byte
		err := snap.Range(rt.KeyGroupStart, rt.KeyGroupEnd, func(kg int, k K, v *S) error {
			kbuf = appendKey(kbuf[:0], k)
			vbuf = s.codec.Append(vbuf[:0], *v)
			w.Keyed(s.name, kg, kbuf, vbuf)
			return nil
		})
		if err != nil {
			return fmt.Errorf("keyed state %q: snapshot: %w", s.name, err)
		}
		return nil
	}
	if err := writeNowOrLater(w, write, snap.Release); err != nil {
		return err
	}
	return s.err
}

// Restore binds the state to the runtime's backend and loads the entries of the subtask's
// key groups. Operators call it in Open, also for a fresh start (r nil).
func (s *KeyedState[K, S]) Restore(rt Runtime, r StateReader) error {
	s.bind(rt)
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
		if s.be != nil {
			if err := s.be.Put(kg, s.bname, key, value); err != nil {
				return fmt.Errorf("state %q, key %v: %w", s.name, k, err)
			}
			return nil
		}
		s.values.Put(kg, k, &v)
		return nil
	})
}
