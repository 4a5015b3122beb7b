package state

import (
	"encoding/binary"
	"fmt"
)

// Map state keeps one stored entry per (key, user key): its key part is
//
//	uvarint(len(key)) | key | user key
//
// so all entries of one key share a prefix (AppendEntryPrefix) and form one contiguous
// range inside their key group and state: a map is read entry by entry or cleared with one
// range deletion, never loaded whole. The length prefix keeps key "a"'s entries apart from
// key "ab"'s.

// AppendEntryKey appends the key part of the entry (key, sub) to dst.
func AppendEntryKey(dst, key, sub []byte) []byte {
	return append(AppendEntryPrefix(dst, key), sub...)
}

// AppendEntryPrefix appends the prefix shared by every entry of key to dst.
func AppendEntryPrefix(dst, key []byte) []byte {
	dst = binary.AppendUvarint(dst, uint64(len(key)))
	return append(dst, key...)
}

// SplitEntryKey decodes what AppendEntryKey wrote; key and sub alias b.
func SplitEntryKey(b []byte) (key, sub []byte, err error) {
	n, w := binary.Uvarint(b)
	if w <= 0 || w != len(binary.AppendUvarint(nil, n)) || uint64(len(b)-w) < n {
		return nil, nil, fmt.Errorf("map state entry key of %d bytes: bad key length", len(b))
	}
	rest := b[w:]
	return rest[:n], rest[n:], nil
}
