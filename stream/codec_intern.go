package stream

import (
	"encoding/binary"
	"sync/atomic"
	"unsafe"
)

// Decoding a record that holds a string allocates the string. Records that cross between
// TaskManagers are mostly words, names and IDs drawn from a small set, decoded over and
// over (WordCount decodes each word a consumer in another TaskManager counts). Short
// strings are therefore looked up in a table of those decoded last: a string decoded
// before, and still in its slot, is returned without allocating. The table is shared by
// every goroutine of the process (its slots are read and written atomically) and holds at
// most internSlots strings of at most internMaxLen bytes, so it keeps at most about
// 200 KB alive. A string that is not in its slot is allocated as before and takes the slot.

const (
	internBits   = 13
	internSlots  = 1 << internBits
	internMaxLen = 32
)

// internTable holds, per slot, a pointer to the length byte of an allocation of the
// string's length followed by its bytes: one allocation of len+1 bytes per string, read and
// replaced atomically.
type internTable struct {
	slots [internSlots]atomic.Pointer[byte]
}

var interned = new(internTable)

// internString returns b as a string, from the table when b is short and its slot holds it.
func internString(b []byte) string {
	if len(b) == 0 || len(b) > internMaxLen {
		return string(b)
	}
	return interned.get(b)
}

// get looks b up in its slot and the slot's neighbour in their pair (so that two strings
// of one slot do not push each other out); a string that is in neither takes the first of
// the two that is empty, or else its own slot.
func (t *internTable) get(b []byte) string {
	i := internHash(b)
	put := i
	for k := range uint64(2) {
		p := t.slots[i^k].Load()
		if p == nil {
			put = i ^ k
			break
		}
		if int(*p) == len(b) {
			if s := unsafe.String((*byte)(unsafe.Add(unsafe.Pointer(p), 1)), len(b)); s == string(b) {
				return s
			}
		}
	}
	buf := make([]byte, len(b)+1)
	buf[0] = byte(len(b))
	copy(buf[1:], b)
	t.slots[put].Store(&buf[0])
	// buf is never written again: the string shares its bytes.
	return unsafe.String(&buf[1], len(b))
}

// internHash is b's slot: a multiplicative hash of its length and of up to 24 of its
// bytes (the first, middle and last 8 of a longer string), cheap enough to cost less than
// the allocation it saves. A poor spread costs hits, never a wrong string.
func internHash(b []byte) uint64 {
	x := uint64(len(b))
	if len(b) < 8 {
		for _, c := range b {
			x = x<<8 | uint64(c)
		}
	} else {
		x ^= binary.LittleEndian.Uint64(b)
		x = x*0x9E3779B97F4A7C15 ^ binary.LittleEndian.Uint64(b[len(b)/2-4:])
		x = x*0x9E3779B97F4A7C15 ^ binary.LittleEndian.Uint64(b[len(b)-8:])
	}
	return x * 0x9E3779B97F4A7C15 >> (64 - internBits)
}
