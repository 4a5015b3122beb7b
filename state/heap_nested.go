package state

import (
	"errors"
	"fmt"
	"maps"
)

// DeclareNested keeps state's entries per key from now on, moving any it already holds
// (restored before the declaration) there.
func (h *Heap) DeclareNested(state string) error {
	if h.closed {
		return ErrClosed
	}
	if h.nested[state] {
		return nil
	}
	for kg, g := range h.groups {
		if g == nil || g.flat[state] == nil {
			continue
		}
		for k := range g.flat[state].m {
			if _, _, err := SplitEntryKey([]byte(k)); err != nil {
				return fmt.Errorf("state %q, key group %d: %w", state, kg, err)
			}
		}
	}
	// Replaced, not changed: a view may share the old set.
	nested := maps.Clone(h.nested)
	if nested == nil {
		nested = map[string]bool{}
	}
	nested[state] = true
	h.nested = nested
	for kg, g := range h.groups {
		if g == nil || g.flat[state] == nil {
			continue
		}
		g = h.ownGroup(kg, false)
		vs := g.flat[state]
		delete(g.flat, state)
		for k, v := range vs.m {
			key, sub, _ := SplitEntryKey([]byte(k))
			h.putEntry(kg, state, key, sub, v)
		}
	}
	return nil
}

// splitNestedKey splits a nested state's stored entry key.
func splitNestedKey(state string, ek []byte) (key, sub []byte, err error) {
	key, sub, err = SplitEntryKey(ek)
	if err != nil {
		return nil, nil, fmt.Errorf("state %q: %w", state, err)
	}
	return key, sub, nil
}

// GetEntry returns a copy of the value of (key, sub).
func (h *Heap) GetEntry(kg int, state string, key, sub []byte) ([]byte, bool, error) {
	if err := h.DeclareNested(state); err != nil {
		return nil, false, err
	}
	return h.getEntry(kg, state, key, sub)
}

func (d *heapTables) getEntry(kg int, state string, key, sub []byte) ([]byte, bool, error) {
	e := d.entries(kg, state, key)
	if e == nil {
		return nil, false, nil
	}
	v, ok := e.m[string(sub)]
	if !ok {
		return nil, false, nil
	}
	return append([]byte(nil), v...), true, nil
}

// entries returns key's entries for reading (nil: none).
func (d *heapTables) entries(kg int, state string, key []byte) *heapValues {
	g := d.group(kg)
	if g == nil || g.subs[state] == nil {
		return nil
	}
	return g.subs[state].m[string(key)]
}

// PutEntry stores copies of sub and value under key.
func (h *Heap) PutEntry(kg int, state string, key, sub, value []byte) error {
	if err := checkKeyGroup(kg); err != nil {
		return err
	}
	if err := h.DeclareNested(state); err != nil {
		return err
	}
	h.putEntry(kg, state, key, sub, append([]byte(nil), value...))
	return nil
}

func (h *Heap) putEntry(kg int, state string, key, sub, value []byte) {
	ks := ownIn(h, &h.ownGroup(kg, true).subs, state, true, groupMapHint)
	// A key's own entries keep Go's small map: there is one such map per key.
	ownIn(h, &ks.m, string(key), true, 0).m[string(sub)] = value
}

// DeleteEntry removes (key, sub).
func (h *Heap) DeleteEntry(kg int, state string, key, sub []byte) error {
	if err := h.DeclareNested(state); err != nil {
		return err
	}
	e := h.entries(kg, state, key)
	if e == nil {
		return nil
	}
	if _, ok := e.m[string(sub)]; !ok {
		return nil
	}
	ks := ownIn(h, &h.ownGroup(kg, false).subs, state, false, 0)
	if len(e.m) == 1 {
		delete(ks.m, string(key))
		return nil
	}
	delete(ownIn(h, &ks.m, string(key), false, 0).m, string(sub))
	return nil
}

// IterateEntries visits key's entries (in no particular order).
func (h *Heap) IterateEntries(kg int, state string, key []byte, fn func(sub, value []byte) error) error {
	if err := h.DeclareNested(state); err != nil {
		return err
	}
	e := h.entries(kg, state, key)
	if e == nil {
		return nil
	}
	for sub, v := range e.m {
		if err := fn([]byte(sub), v); err != nil {
			return err
		}
	}
	return nil
}

// DeleteEntries removes key's entries.
func (h *Heap) DeleteEntries(kg int, state string, key []byte) error {
	if err := h.DeclareNested(state); err != nil {
		return err
	}
	if h.entries(kg, state, key) == nil {
		return nil
	}
	delete(ownIn(h, &h.ownGroup(kg, false).subs, state, false, 0).m, string(key))
	return nil
}

// errAppendNested refuses Append on a nested state (its values are per entry).
var errAppendNested = errors.New("append to a nested (map) state")

// Append appends value to the key's value. The stored slice grows in place: a view shares
// the old slice header, whose bytes an append past its length never changes (the backend's
// header is always the longest of those sharing the array).
func (h *Heap) Append(kg int, state string, key, value []byte) error {
	if h.closed {
		return ErrClosed
	}
	if err := checkKeyGroup(kg); err != nil {
		return err
	}
	if h.nested[state] {
		return fmt.Errorf("state %q: %w", state, errAppendNested)
	}
	vs := ownIn(h, &h.ownGroup(kg, true).flat, state, true, groupMapHint)
	vs.m[string(key)] = append(vs.m[string(key)], value...)
	return nil
}

// iterateNested visits the nested states' entries of key group kg under their stored keys.
func (d *heapTables) iterateNested(kg int, g *heapGroup, fn Entry, only *string) error {
	var ek []byte
	for s, ks := range g.subs {
		if only != nil && s != *only {
			continue
		}
		for k, e := range ks.m {
			ek = AppendEntryPrefix(ek[:0], []byte(k))
			n := len(ek)
			for sub, v := range e.m {
				ek = append(ek[:n], sub...)
				if err := fn(kg, s, ek, v); err != nil {
					return err
				}
			}
		}
	}
	return nil
}
