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
	for kg, states := range h.groups {
		for k := range states[state] {
			if _, _, err := SplitEntryKey([]byte(k)); err != nil {
				return fmt.Errorf("state %q, key group %d: %w", state, kg, err)
			}
		}
	}
	if h.nested == nil {
		h.nested = map[string]bool{}
	}
	h.nested[state] = true
	for kg, states := range h.groups {
		m := states[state]
		delete(states, state)
		for k, v := range m {
			key, sub, _ := SplitEntryKey([]byte(k))
			h.putEntry(kg, state, key, sub, v)
		}
	}
	return nil
}

// GetEntry returns a copy of the value of (key, sub).
func (h *Heap) GetEntry(kg int, state string, key, sub []byte) ([]byte, bool, error) {
	if err := h.DeclareNested(state); err != nil {
		return nil, false, err
	}
	v, ok := h.subs[kg][state][string(key)][string(sub)]
	if !ok {
		return nil, false, nil
	}
	return append([]byte(nil), v...), true, nil
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
	if h.subs == nil {
		h.subs = map[int]map[string]map[string]map[string][]byte{}
	}
	states := h.subs[kg]
	if states == nil {
		states = map[string]map[string]map[string][]byte{}
		h.subs[kg] = states
	}
	keys := states[state]
	if keys == nil {
		keys = map[string]map[string][]byte{}
		states[state] = keys
	}
	m := keys[string(key)]
	if m == nil {
		m = map[string][]byte{}
		keys[string(key)] = m
	}
	m[string(sub)] = value
}

// DeleteEntry removes (key, sub).
func (h *Heap) DeleteEntry(kg int, state string, key, sub []byte) error {
	if err := h.DeclareNested(state); err != nil {
		return err
	}
	keys := h.subs[kg][state]
	if m := keys[string(key)]; m != nil {
		delete(m, string(sub))
		if len(m) == 0 {
			delete(keys, string(key))
		}
	}
	return nil
}

// IterateEntries visits key's entries (in no particular order).
func (h *Heap) IterateEntries(kg int, state string, key []byte, fn func(sub, value []byte) error) error {
	if err := h.DeclareNested(state); err != nil {
		return err
	}
	for sub, v := range h.subs[kg][state][string(key)] {
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
	delete(h.subs[kg][state], string(key))
	return nil
}

// errAppendNested refuses Append on a nested state (its values are per entry).
var errAppendNested = errors.New("append to a nested (map) state")

// Append appends value to the key's value. The stored slice grows in place: a View shares
// the old slice header, whose bytes an append past its length never changes.
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
	m[string(key)] = append(m[string(key)], value...)
	return nil
}

// flat*Entry serve Get/Put/Delete of a nested state's stored entry keys.
func (h *Heap) flatGetEntry(kg int, state string, ek []byte) ([]byte, bool, error) {
	key, sub, err := SplitEntryKey(ek)
	if err != nil {
		return nil, false, fmt.Errorf("state %q: %w", state, err)
	}
	return h.GetEntry(kg, state, key, sub)
}

func (h *Heap) flatPutEntry(kg int, state string, ek, value []byte) error {
	key, sub, err := SplitEntryKey(ek)
	if err != nil {
		return fmt.Errorf("state %q: %w", state, err)
	}
	return h.PutEntry(kg, state, key, sub, value)
}

func (h *Heap) flatDeleteEntry(kg int, state string, ek []byte) error {
	key, sub, err := SplitEntryKey(ek)
	if err != nil {
		return fmt.Errorf("state %q: %w", state, err)
	}
	return h.DeleteEntry(kg, state, key, sub)
}

// iterateNested visits the nested states' entries of key group kg under their stored keys.
func (h *Heap) iterateNested(kg int, fn Entry, only *string) error {
	var ek []byte
	for s, keys := range h.subs[kg] {
		if only != nil && s != *only {
			continue
		}
		for k, m := range keys {
			ek = AppendEntryPrefix(ek[:0], []byte(k))
			n := len(ek)
			for sub, v := range m {
				ek = append(ek[:n], sub...)
				if err := fn(kg, s, ek, v); err != nil {
					return err
				}
			}
		}
	}
	return nil
}

// cloneSubs copies the nested maps for a View (values are never changed in place).
func (h *Heap) cloneSubs() map[int]map[string]map[string]map[string][]byte {
	if h.subs == nil {
		return nil
	}
	c := make(map[int]map[string]map[string]map[string][]byte, len(h.subs))
	for kg, states := range h.subs {
		cs := make(map[string]map[string]map[string][]byte, len(states))
		for s, keys := range states {
			ck := make(map[string]map[string][]byte, len(keys))
			for k, m := range keys {
				ck[k] = maps.Clone(m)
			}
			cs[s] = ck
		}
		c[kg] = cs
	}
	return c
}
