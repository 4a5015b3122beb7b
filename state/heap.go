package state

import "maps"

// Heap is the hashmap backend: entries on the Go heap, per key group and state.
type Heap struct {
	groups map[int]map[string]map[string][]byte
	// subs holds the entries of nested states (DeclareNested) per key: kg, state, key, sub.
	subs   map[int]map[string]map[string]map[string][]byte
	nested map[string]bool
	closed bool
}

// NewHeap returns an empty heap backend.
func NewHeap() *Heap { return &Heap{groups: map[int]map[string]map[string][]byte{}} }

// Type is Hashmap.
func (h *Heap) Type() Type { return Hashmap }

// Get returns a copy of the value.
func (h *Heap) Get(kg int, state string, key []byte) ([]byte, bool, error) {
	if h.closed {
		return nil, false, ErrClosed
	}
	if h.nested[state] {
		return h.flatGetEntry(kg, state, key)
	}
	v, ok := h.groups[kg][state][string(key)]
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
		return h.flatPutEntry(kg, state, key, value)
	}
	states := h.groups[kg]
	if states == nil {
		states = map[string]map[string][]byte{}
		h.groups[kg] = states
	}
	m := states[state]
	if m == nil {
		m = map[string][]byte{}
		states[state] = m
	}
	m[string(key)] = append([]byte(nil), value...)
	return nil
}

// Delete removes the key.
func (h *Heap) Delete(kg int, state string, key []byte) error {
	if h.closed {
		return ErrClosed
	}
	if h.nested[state] {
		return h.flatDeleteEntry(kg, state, key)
	}
	delete(h.groups[kg][state], string(key))
	return nil
}

// Iterate visits one state's entries of key groups from..to.
func (h *Heap) Iterate(state string, from, to int, fn func(kg int, key, value []byte) error) error {
	return h.iterate(from, to, func(kg int, s string, k, v []byte) error {
		if s != state {
			return nil
		}
		return fn(kg, k, v)
	}, &state)
}

// IterateRange visits every entry of key groups from..to.
func (h *Heap) IterateRange(from, to int, fn Entry) error {
	return h.iterate(from, to, fn, nil)
}

func (h *Heap) iterate(from, to int, fn Entry, only *string) error {
	if h.closed {
		return ErrClosed
	}
	if err := checkRange(from, to); err != nil {
		return err
	}
	for kg := from; kg <= to; kg++ {
		for s, m := range h.groups[kg] {
			if only != nil && s != *only {
				continue
			}
			for k, v := range m {
				if err := fn(kg, s, []byte(k), v); err != nil {
					return err
				}
			}
		}
		if err := h.iterateNested(kg, fn, only); err != nil {
			return err
		}
	}
	return nil
}

// View copies the maps (values are never modified in place, so they are shared).
func (h *Heap) View() (View, error) {
	if h.closed {
		return nil, ErrClosed
	}
	c := make(map[int]map[string]map[string][]byte, len(h.groups))
	for kg, states := range h.groups {
		cs := make(map[string]map[string][]byte, len(states))
		for s, m := range states {
			cs[s] = maps.Clone(m)
		}
		c[kg] = cs
	}
	return &heapView{h: &Heap{groups: c, subs: h.cloneSubs(), nested: maps.Clone(h.nested)}}, nil
}

// Close drops the state.
func (h *Heap) Close() error {
	h.groups, h.subs, h.closed = nil, nil, true
	return nil
}

type heapView struct{ h *Heap }

func (v *heapView) Get(kg int, state string, key []byte) ([]byte, bool, error) {
	return v.h.Get(kg, state, key)
}
func (v *heapView) Iterate(state string, from, to int, fn func(kg int, key, value []byte) error) error {
	return v.h.Iterate(state, from, to, fn)
}
func (v *heapView) IterateRange(from, to int, fn Entry) error { return v.h.IterateRange(from, to, fn) }
func (v *heapView) Close() error                              { return v.h.Close() }
