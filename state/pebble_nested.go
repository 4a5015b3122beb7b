package state

import (
	"fmt"
)

// DeclareNested is a no-op: Pebble keeps a key's entries together by their stored keys.
func (p *PebbleBackend) DeclareNested(string) error {
	if p.db == nil {
		return ErrClosed
	}
	return nil
}

func (p *PebbleBackend) entryKey(kg int, state string, key, sub []byte) []byte {
	p.kbuf = AppendEntryKey(appendPrefix(p.kbuf[:0], kg, state), key, sub)
	return p.kbuf
}

// GetEntry returns a copy of the value of (key, sub).
func (p *PebbleBackend) GetEntry(kg int, state string, key, sub []byte) ([]byte, bool, error) {
	if p.db == nil {
		return nil, false, ErrClosed
	}
	return p.bufferGet(p.entryKey(kg, state, key, sub))
}

// PutEntry writes one entry: one stored key per (key, sub), so a large map is never
// read or written whole.
func (p *PebbleBackend) PutEntry(kg int, state string, key, sub, value []byte) error {
	if p.db == nil {
		return ErrClosed
	}
	if err := checkKeyGroup(kg); err != nil {
		return err
	}
	return p.bufferPut(p.entryKey(kg, state, key, sub), value, false)
}

// DeleteEntry removes one entry.
func (p *PebbleBackend) DeleteEntry(kg int, state string, key, sub []byte) error {
	if p.db == nil {
		return ErrClosed
	}
	return p.bufferPut(p.entryKey(kg, state, key, sub), nil, true)
}

// entryRange is the stored-key range of key's entries (its own slices: Pebble must not
// see iterator bounds change while it iterates). The prefix holds a uvarint's last byte
// (< 0x80), so it always has an end.
func entryRange(kg int, state string, key []byte) (lo, hi []byte) {
	lo = AppendEntryPrefix(appendPrefix(nil, kg, state), key)
	return lo, prefixEnd(lo)
}

// IterateEntries visits key's entries in sub order.
func (p *PebbleBackend) IterateEntries(kg int, state string, key []byte, fn func(sub, value []byte) error) error {
	if p.db == nil {
		return ErrClosed
	}
	if err := p.beforeDirect(false); err != nil {
		return err
	}
	lo, hi := entryRange(kg, state, key)
	n := len(lo)
	return scan(p.db, lo, hi, func(k, v []byte) error { return fn(k[n:], v) })
}

// DeleteEntries removes key's entries with one range deletion.
func (p *PebbleBackend) DeleteEntries(kg int, state string, key []byte) error {
	if p.db == nil {
		return ErrClosed
	}
	if err := p.beforeDirect(true); err != nil {
		return err
	}
	lo, hi := entryRange(kg, state, key)
	if err := p.db.DeleteRange(lo, hi, p.wo); err != nil {
		return fmt.Errorf("pebble state backend: delete range: %w", err)
	}
	return nil
}

// Append merges value into the key's value: Pebble's default merger concatenates, at read
// time and in compactions, so appending costs one write and no read.
func (p *PebbleBackend) Append(kg int, state string, key, value []byte) error {
	if p.db == nil {
		return ErrClosed
	}
	if err := checkKeyGroup(kg); err != nil {
		return err
	}
	if err := p.beforeDirect(true); err != nil {
		return err
	}
	p.kbuf = AppendKey(p.kbuf[:0], kg, state, key)
	if err := p.db.Merge(p.kbuf, value, p.wo); err != nil {
		return fmt.Errorf("pebble state backend: merge: %w", err)
	}
	return nil
}
