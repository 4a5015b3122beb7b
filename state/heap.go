package state

import (
	"maps"
	"slices"
	"sync"
	"sync/atomic"
)

// Heap is the hashmap backend: entries on the Go heap, per key group and state.
//
// Views are copy-on-write (Flink's CopyOnWriteStateTable): View copies the slice of key
// groups and bumps an epoch, so taking one at a checkpoint barrier costs microseconds
// whatever the state's size, and the checkpoint reads the view on another goroutine while
// the subtask goes on. While a view is open the subtask changes nothing a view can reach:
// its first write into a key group, a state's map in it, or a key's entries (map state)
// clones that map (a shallow copy: values are never changed in place) and writes into the
// clone. Once every view is closed, writes go in place again.
type Heap struct {
	heapTables
	epoch  uint64       // bumped by every View
	open   atomic.Int64 // views not yet closed
	closed bool
}

// heapTables is what a Heap and its views read.
type heapTables struct {
	groups []*heapGroup // by key group; nil: empty
	// nested holds the states declared nested (DeclareNested); replaced, never changed,
	// once a view may share it.
	nested map[string]bool
}

// heapGroup is one key group's states. It and the maps under it carry the epoch they were
// made private in: one of an older epoch than the Heap's may be read by an open view.
type heapGroup struct {
	epoch uint64
	flat  map[string]*heapValues // state -> its values
	subs  map[string]*heapKeys   // nested state -> its keys' entries
}

// cowMap is a map carrying the epoch it was made private in: one of an older epoch than
// the Heap's may be read by an open view.
type cowMap[V any] struct {
	epoch uint64
	m     map[string]V
}

// heapValues maps keys (or a nested key's sub keys) to values.
type heapValues = cowMap[[]byte]

// heapKeys maps a nested state's keys to their entries.
type heapKeys = cowMap[*heapValues]

// NewHeap returns an empty heap backend.
func NewHeap() *Heap { return &Heap{} }

// Type is Hashmap.
func (h *Heap) Type() Type { return Hashmap }

// shared reports whether something of epoch e may be read by an open view.
func (h *Heap) shared(e uint64) bool { return e != h.epoch && h.open.Load() > 0 }

// ownGroup returns key group kg, private to the current epoch (create: made when missing;
// else nil).
func (h *Heap) ownGroup(kg int, create bool) *heapGroup {
	if kg >= len(h.groups) {
		if !create {
			return nil
		}
		h.groups = append(h.groups, make([]*heapGroup, kg+1-len(h.groups))...)
	}
	g := h.groups[kg]
	switch {
	case g == nil && create:
		g = &heapGroup{epoch: h.epoch}
		h.groups[kg] = g
	case g != nil && h.shared(g.epoch):
		g = &heapGroup{epoch: h.epoch, flat: maps.Clone(g.flat), subs: maps.Clone(g.subs)}
		h.groups[kg] = g
	}
	return g
}

// ownIn returns (*parent)[name] private to h's current epoch: cloned when an open view may
// share it, made when missing if create (else nil), with room for hint entries. It is how a
// key group's states (&g.flat), its nested states (&g.subs) and a nested key's entries
// (&ks.m) are written.
func ownIn[V any](h *Heap, parent *map[string]*cowMap[V], name string, create bool, hint int) *cowMap[V] {
	c := (*parent)[name]
	switch {
	case c == nil && create:
		c = &cowMap[V]{epoch: h.epoch, m: make(map[string]V, hint)}
	case c != nil && h.shared(c.epoch):
		c = &cowMap[V]{epoch: h.epoch, m: maps.Clone(c.m)}
	default:
		return c
	}
	if *parent == nil {
		*parent = map[string]*cowMap[V]{}
	}
	(*parent)[name] = c
	return c
}

// group returns key group kg for reading (nil: empty).
func (d *heapTables) group(kg int) *heapGroup {
	if kg < 0 || kg >= len(d.groups) {
		return nil
	}
	return d.groups[kg]
}

// Get returns a copy of the value.
func (h *Heap) Get(kg int, state string, key []byte) ([]byte, bool, error) {
	if h.closed {
		return nil, false, ErrClosed
	}
	return h.get(kg, state, key)
}

func (d *heapTables) get(kg int, state string, key []byte) ([]byte, bool, error) {
	if d.nested[state] {
		k, sub, err := splitNestedKey(state, key)
		if err != nil {
			return nil, false, err
		}
		return d.getEntry(kg, state, k, sub)
	}
	g := d.group(kg)
	if g == nil {
		return nil, false, nil
	}
	vs := g.flat[state]
	if vs == nil {
		return nil, false, nil
	}
	v, ok := vs.m[string(key)]
	if !ok {
		return nil, false, nil
	}
	return append([]byte(nil), v...), true, nil
}

// Put stores copies of key and value.
func (h *Heap) Put(kg int, state string, key, value []byte) error {
	if h.closed {
		return ErrClosed
	}
	if err := checkKeyGroup(kg); err != nil {
		return err
	}
	if h.nested[state] {
		k, sub, err := splitNestedKey(state, key)
		if err != nil {
			return err
		}
		return h.PutEntry(kg, state, k, sub, value)
	}
	ownIn(h, &h.ownGroup(kg, true).flat, state, true, groupMapHint).m[string(key)] = append([]byte(nil), value...)
	return nil
}

// Delete removes the key.
func (h *Heap) Delete(kg int, state string, key []byte) error {
	if h.closed {
		return ErrClosed
	}
	if h.nested[state] {
		k, sub, err := splitNestedKey(state, key)
		if err != nil {
			return err
		}
		return h.DeleteEntry(kg, state, k, sub)
	}
	g := h.group(kg)
	if g == nil || g.flat[state] == nil {
		return nil
	}
	if _, ok := g.flat[state].m[string(key)]; !ok {
		return nil
	}
	delete(ownIn(h, &h.ownGroup(kg, false).flat, state, false, 0).m, string(key))
	return nil
}

// Iterate visits one state's entries of key groups from..to.
func (h *Heap) Iterate(state string, from, to int, fn func(kg int, key, value []byte) error) error {
	if h.closed {
		return ErrClosed
	}
	return h.iterate(from, to, func(kg int, _ string, k, v []byte) error { return fn(kg, k, v) }, &state)
}

// IterateRange visits every entry of key groups from..to.
func (h *Heap) IterateRange(from, to int, fn Entry) error {
	if h.closed {
		return ErrClosed
	}
	return h.iterate(from, to, fn, nil)
}

// iterate visits the entries of key groups from..to in key-group order, of state only
// when only is set. fn may change the backend (the maps ranged over are then either
// changed in place, as Go allows, or left behind as clones are written).
func (d *heapTables) iterate(from, to int, fn Entry, only *string) error {
	if err := checkRange(from, to); err != nil {
		return err
	}
	for kg := from; kg <= to && kg < len(d.groups); kg++ {
		g := d.groups[kg]
		if g == nil {
			continue
		}
		for s, vs := range g.flat {
			if only != nil && s != *only {
				continue
			}
			for k, v := range vs.m {
				if err := fn(kg, s, []byte(k), v); err != nil {
					return err
				}
			}
		}
		if err := d.iterateNested(kg, g, fn, only); err != nil {
			return err
		}
	}
	return nil
}

// View returns a copy-on-write view: O(key groups), whatever the state's size.
func (h *Heap) View() (View, error) {
	if h.closed {
		return nil, ErrClosed
	}
	h.epoch++
	h.open.Add(1)
	return &heapView{d: heapTables{groups: slices.Clone(h.groups), nested: h.nested}, open: &h.open}, nil
}

// Close drops the state.
func (h *Heap) Close() error {
	h.groups, h.closed = nil, true
	return nil
}

type heapView struct {
	d      heapTables
	open   *atomic.Int64
	once   sync.Once
	closed bool
}

func (v *heapView) Get(kg int, state string, key []byte) ([]byte, bool, error) {
	if v.closed {
		return nil, false, ErrClosed
	}
	return v.d.get(kg, state, key)
}

func (v *heapView) Iterate(state string, from, to int, fn func(kg int, key, value []byte) error) error {
	if v.closed {
		return ErrClosed
	}
	return v.d.iterate(from, to, func(kg int, _ string, k, val []byte) error { return fn(kg, k, val) }, &state)
}

func (v *heapView) IterateRange(from, to int, fn Entry) error {
	if v.closed {
		return ErrClosed
	}
	return v.d.iterate(from, to, fn, nil)
}

// Close releases the view: the backend stops copying what the view shares with it.
func (v *heapView) Close() error {
	v.once.Do(func() {
		v.d, v.closed = heapTables{}, true
		v.open.Add(-1)
	})
	return nil
}
