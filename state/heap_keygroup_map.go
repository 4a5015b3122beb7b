package state

import (
	"maps"
	"slices"
	"sync"
	"sync/atomic"
)

// KeyGroupMap is the heap backend's table of objects: a map from keys to values (by
// pointer, changed in place by the subtask) split into one Go map per key group, with
// copy-on-write snapshots (Flink's CopyOnWriteStateMap, at the granularity of a key
// group's map and of one value).
//
// Snapshot is cheap (it copies the slice of key-group maps and bumps the epoch) and
// returns a point-in-time view that another goroutine reads while the subtask goes on. As
// long as a snapshot is open, the subtask changes nothing the snapshot can reach: a write
// into a key group whose map an open snapshot shares clones the map first, and a value
// handed out for change (Get, Range) that an open snapshot shares is deep-copied (Copy)
// into the subtask's map first. Once no snapshot is open, everything is changed in place
// again, at the cost of one atomic load per access.
//
// Methods other than Snapshot's view and Release are called from one goroutine.
type KeyGroupMap[K comparable, V any] struct {
	groups []*kgObjects[K, V] // by key group; nil: empty
	epoch  uint64             // bumped by every Snapshot
	open   atomic.Int64       // snapshots not yet released
	// Copy returns a deep copy of a value a snapshot shares (the codec's round trip).
	Copy func(*V) (*V, error)
}

// kgObjects is one key group's map. Maps and cells of an older epoch than the table's may
// be shared with open snapshots and are never changed while one is.
type kgObjects[K comparable, V any] struct {
	epoch uint64
	m     map[K]objCell[V]
}

type objCell[V any] struct {
	p     *V
	epoch uint64
}

// groupMapHint sizes a key group's new map past the 8 entries Go keeps in a "small" map.
// A small map is searched slot by slot: with short string keys of equal length (WordCount's
// words, ids) a lookup took 27-35 ns against 15-21 ns in a map made with this hint, and a key
// group of a subtask often holds a handful of keys. The cost is about 330 bytes more per
// key group in use (a map of 4 string keys and 16-byte values: 688 bytes against 360).
// maps.Clone keeps the larger layout.
const groupMapHint = 9

// shared reports whether something of epoch e may be read by an open snapshot.
func (t *KeyGroupMap[K, V]) shared(e uint64) bool { return e != t.epoch && t.open.Load() > 0 }

// own returns key group kg's map, made private to the current epoch (create: make an
// empty one when there is none; else nil).
func (t *KeyGroupMap[K, V]) own(kg int, create bool) *kgObjects[K, V] {
	if kg >= len(t.groups) {
		if !create {
			return nil
		}
		t.groups = append(t.groups, make([]*kgObjects[K, V], kg+1-len(t.groups))...)
	}
	g := t.groups[kg]
	switch {
	case g == nil && create:
		g = &kgObjects[K, V]{epoch: t.epoch, m: make(map[K]objCell[V], groupMapHint)}
		t.groups[kg] = g
	case g != nil && t.shared(g.epoch):
		g = &kgObjects[K, V]{epoch: t.epoch, m: maps.Clone(g.m)}
		t.groups[kg] = g
	}
	return g
}

// Get returns k's value in key group kg for reading and changing in place (nil: none).
func (t *KeyGroupMap[K, V]) Get(kg int, k K) (*V, error) {
	if kg >= len(t.groups) || t.groups[kg] == nil {
		return nil, nil
	}
	c, ok := t.groups[kg].m[k]
	if !ok {
		return nil, nil
	}
	if !t.shared(c.epoch) {
		return c.p, nil
	}
	return t.copyInto(t.own(kg, false), k, c)
}

// copyInto stores a private copy of the shared cell c under k in g and returns it.
func (t *KeyGroupMap[K, V]) copyInto(g *kgObjects[K, V], k K, c objCell[V]) (*V, error) {
	p, err := t.Copy(c.p)
	if err != nil {
		return nil, err
	}
	g.m[k] = objCell[V]{p: p, epoch: t.epoch}
	return p, nil
}

// Put makes p k's value (p is the state from now on).
func (t *KeyGroupMap[K, V]) Put(kg int, k K, p *V) {
	t.own(kg, true).m[k] = objCell[V]{p: p, epoch: t.epoch}
}

// Delete removes k.
func (t *KeyGroupMap[K, V]) Delete(kg int, k K) {
	if kg >= len(t.groups) || t.groups[kg] == nil {
		return
	}
	if _, ok := t.groups[kg].m[k]; !ok {
		return
	}
	delete(t.own(kg, false).m, k)
}

// Len is the number of keys.
func (t *KeyGroupMap[K, V]) Len() int {
	n := 0
	for _, g := range t.groups {
		if g != nil {
			n += len(g.m)
		}
	}
	return n
}

// Range calls fn for every key (key group by key group) until it returns false or an
// error; fn may change the value in place and delete keys.
func (t *KeyGroupMap[K, V]) Range(fn func(kg int, k K, v *V) (bool, error)) error {
	for kg := range t.groups {
		if t.groups[kg] == nil {
			continue
		}
		g := t.own(kg, false)
		for k, c := range g.m {
			p := c.p
			if t.shared(c.epoch) {
				var err error
				if p, err = t.copyInto(g, k, c); err != nil {
					return err
				}
			}
			more, err := fn(kg, k, p)
			if err != nil || !more {
				return err
			}
		}
	}
	return nil
}

// Snapshot returns a point-in-time view of the table. Read it from any one goroutine and
// Release it when done (until then the subtask copies what it changes).
func (t *KeyGroupMap[K, V]) Snapshot() *KeyGroupSnapshot[K, V] {
	t.epoch++
	t.open.Add(1)
	return &KeyGroupSnapshot[K, V]{groups: slices.Clone(t.groups), open: &t.open}
}

// OpenSnapshots is the number of snapshots not yet released.
func (t *KeyGroupMap[K, V]) OpenSnapshots() int { return int(t.open.Load()) }

// KeyGroupSnapshot is a point-in-time view of a KeyGroupMap.
type KeyGroupSnapshot[K comparable, V any] struct {
	groups []*kgObjects[K, V]
	open   *atomic.Int64
	once   sync.Once
}

// Range calls fn for every entry of key groups from..to, key group by key group; fn must
// not change the value.
func (s *KeyGroupSnapshot[K, V]) Range(from, to int, fn func(kg int, k K, v *V) error) error {
	for kg := max(from, 0); kg <= to && kg < len(s.groups); kg++ {
		g := s.groups[kg]
		if g == nil {
			continue
		}
		for k, c := range g.m {
			if err := fn(kg, k, c.p); err != nil {
				return err
			}
		}
	}
	return nil
}

// Release ends the snapshot (idempotent); it must not be read afterwards.
func (s *KeyGroupSnapshot[K, V]) Release() {
	s.once.Do(func() {
		s.groups = nil
		s.open.Add(-1)
	})
}
