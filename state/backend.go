package state

import (
	"encoding/binary"
	"errors"
	"fmt"
	"strings"
)

// Type names a state backend (state.backend.type).
type Type string

const (
	// Hashmap keeps state on the Go heap (the default).
	Hashmap Type = "hashmap"
	// Pebble keeps state in an embedded LSM on local disk.
	Pebble Type = "pebble"
)

// ParseType parses a state.backend.type value. alias is true when raw is Flink's name
// ("rocksdb") for the pebble backend, which callers log.
func ParseType(raw string) (t Type, alias bool, err error) {
	switch strings.ToLower(strings.TrimSpace(raw)) {
	case "", "hashmap", "heap", "memory":
		return Hashmap, false, nil
	case "pebble":
		return Pebble, false, nil
	case "rocksdb":
		return Pebble, true, nil
	}
	return "", false, fmt.Errorf("state.backend.type: %q is not a state backend (expected hashmap or pebble; rocksdb is accepted as an alias of pebble)", raw)
}

// MaxKeyGroups bounds maxParallelism: a key group is stored in two bytes.
const MaxKeyGroups = 1 << 16

// ErrClosed is returned by a backend or view used after Close.
var ErrClosed = errors.New("state backend closed")

// Entry receives one entry of an iteration. key and value are valid only during the call.
type Entry func(kg int, state string, key, value []byte) error

// Reader reads keyed state.
type Reader interface {
	// Get returns a copy of the value of (kg, state, key) and whether it exists.
	Get(kg int, state string, key []byte) ([]byte, bool, error)
	// Iterate calls fn for every entry of state in key groups from..to (inclusive), in
	// key-group order. The order of keys within a key group is the backend's.
	Iterate(state string, from, to int, fn func(kg int, key, value []byte) error) error
	// IterateRange calls fn for every entry of every state in key groups from..to.
	IterateRange(from, to int, fn Entry) error
}

// Backend is one subtask's keyed state. Its methods are called from the subtask's goroutine;
// a View may be read from another goroutine while the backend goes on changing.
type Backend interface {
	Reader
	// Put sets the value of (kg, state, key); key and value may be reused after the call.
	Put(kg int, state string, key, value []byte) error
	// Delete removes (kg, state, key); deleting a missing key is not an error.
	Delete(kg int, state string, key []byte) error
	// View returns a consistent, read-only view of the state as it is now, unaffected by
	// later writes (the state a checkpoint barrier sees). Close it when done.
	View() (View, error)
	// Type names the backend.
	Type() Type
	// Close releases the backend and its files.
	Close() error
}

// View is a read-only point-in-time view of a backend.
type View interface {
	Reader
	Close() error
}

// AppendKey appends the stored key of (kg, state, key) to dst.
func AppendKey(dst []byte, kg int, state string, key []byte) []byte {
	dst = appendPrefix(dst, kg, state)
	return append(dst, key...)
}

func appendPrefix(dst []byte, kg int, state string) []byte {
	dst = binary.BigEndian.AppendUint16(dst, uint16(kg))
	dst = binary.AppendUvarint(dst, uint64(len(state)))
	return append(dst, state...)
}

// SplitKey decodes a stored key.
func SplitKey(b []byte) (kg int, state string, key []byte, err error) {
	if len(b) < 3 {
		return 0, "", nil, fmt.Errorf("state key of %d bytes is too short", len(b))
	}
	kg = int(binary.BigEndian.Uint16(b))
	n, w := binary.Uvarint(b[2:])
	if w <= 0 || w != len(binary.AppendUvarint(nil, n)) || uint64(len(b)-2-w) < n {
		return 0, "", nil, fmt.Errorf("state key in key group %d: bad state name length", kg)
	}
	rest := b[2+w:]
	return kg, string(rest[:n]), rest[n:], nil
}

// keyGroupBounds returns the stored-key range [lo, hi) of key groups from..to.
func keyGroupBounds(from, to int) (lo, hi []byte) {
	lo = binary.BigEndian.AppendUint16(nil, uint16(from))
	if to+1 >= MaxKeyGroups {
		return lo, nil
	}
	return lo, binary.BigEndian.AppendUint16(nil, uint16(to+1))
}

func checkRange(from, to int) error {
	if from < 0 || to >= MaxKeyGroups || from > to+1 {
		return fmt.Errorf("key-group range %d..%d is not within 0..%d", from, to, MaxKeyGroups-1)
	}
	return nil
}

func checkKeyGroup(kg int) error {
	if kg < 0 || kg >= MaxKeyGroups {
		return fmt.Errorf("key group %d is not within 0..%d", kg, MaxKeyGroups-1)
	}
	return nil
}

// prefixEnd returns the smallest key greater than every key with prefix p (nil: none).
func prefixEnd(p []byte) []byte {
	end := append([]byte(nil), p...)
	for i := len(end) - 1; i >= 0; i-- {
		end[i]++
		if end[i] != 0 {
			return end[:i+1]
		}
	}
	return nil
}
