package snapshot

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"io"
	"slices"
)

// File is a parsed state file with the data blocks that were loaded.
type File struct {
	Header Header
	blocks map[int64][]byte // by offset
}

// maxHeader bounds the header size accepted (64 MiB).
const maxHeader = 64 << 20

// Parse parses a whole state file held in memory, loading every block.
func Parse(b []byte) (*File, error) {
	return Read(bytes.NewReader(b), nil)
}

// Read parses a state file from r. It loads every list block and the keyed blocks whose key
// group satisfies want (nil: all); it seeks past the others when r is an io.Seeker.
func Read(r io.Reader, want func(kg int) bool) (*File, error) {
	var pre [len(Magic) + 1]byte
	if _, err := io.ReadFull(r, pre[:]); err != nil {
		return nil, fmt.Errorf("%w: reading magic: %w", ErrCorrupt, err)
	}
	if string(pre[:len(Magic)]) != Magic {
		return nil, fmt.Errorf("%w: magic %q, want %q", ErrCorrupt, pre[:len(Magic)], Magic)
	}
	version := pre[len(Magic)]
	if version < 1 || version > Version {
		return nil, fmt.Errorf("%w: version %d, this build reads 1..%d", ErrCorrupt, version, Version)
	}
	br := &byteReader{r: r}
	hlen, err := binary.ReadUvarint(br)
	if err != nil {
		return nil, fmt.Errorf("%w: reading header length: %w", ErrCorrupt, err)
	}
	if hlen > maxHeader {
		return nil, fmt.Errorf("%w: header of %d bytes exceeds %d", ErrCorrupt, hlen, maxHeader)
	}
	hb := make([]byte, hlen)
	if _, err := io.ReadFull(r, hb); err != nil {
		return nil, fmt.Errorf("%w: reading %d header bytes: %w", ErrCorrupt, hlen, err)
	}
	h, err := parseHeader(hb, version)
	if err != nil {
		return nil, err
	}
	dataStart := int64(len(pre)) + int64(br.n) + int64(hlen)
	var need []Block
	for _, o := range h.Operators {
		for _, k := range o.Keyed {
			for _, g := range k.Groups {
				if want == nil || want(g.KeyGroup) {
					need = append(need, g)
				}
			}
		}
		for _, l := range o.Lists {
			need = append(need, l.Block)
		}
	}
	slices.SortFunc(need, func(a, b Block) int {
		switch {
		case a.Offset < b.Offset:
			return -1
		case a.Offset > b.Offset:
			return 1
		}
		return 0
	})
	f := &File{Header: h, blocks: make(map[int64][]byte, len(need))}
	seeker, canSeek := r.(io.Seeker)
	pos := int64(0) // position within the data section
	for _, b := range need {
		if b.Offset < pos || b.Length < 0 || b.Length > 1<<40 {
			if _, dup := f.blocks[b.Offset]; dup && b.Offset < pos {
				continue
			}
			return nil, fmt.Errorf("%w: vertex %q subtask %d: overlapping or invalid block at offset %d", ErrCorrupt, h.Vertex, h.Subtask, b.Offset)
		}
		if skip := b.Offset - pos; skip > 0 {
			if canSeek {
				if _, err := seeker.Seek(dataStart+b.Offset, io.SeekStart); err != nil {
					return nil, fmt.Errorf("seeking to block at %d: %w", b.Offset, err)
				}
			} else if _, err := io.CopyN(io.Discard, r, skip); err != nil {
				return nil, fmt.Errorf("%w: skipping to block at %d: %w", ErrCorrupt, b.Offset, err)
			}
		}
		data := make([]byte, b.Length)
		if _, err := io.ReadFull(r, data); err != nil {
			return nil, fmt.Errorf("%w: vertex %q subtask %d: reading block at %d (%d bytes): %w", ErrCorrupt, h.Vertex, h.Subtask, b.Offset, b.Length, err)
		}
		f.blocks[b.Offset] = data
		pos = b.Offset + b.Length
	}
	return f, nil
}

// byteReader reads one byte at a time, counting, so nothing is buffered past the header.
type byteReader struct {
	r io.Reader
	n int
}

func (b *byteReader) ReadByte() (byte, error) {
	var p [1]byte
	if _, err := io.ReadFull(b.r, p[:]); err != nil {
		return 0, err
	}
	b.n++
	return p[0], nil
}

// block returns a loaded block's bytes.
func (f *File) block(b Block) ([]byte, bool) {
	data, ok := f.blocks[b.Offset]
	return data, ok
}

// forEachEntry decodes a block of length-prefixed pairs.
func forEachEntry(data []byte, fn func(a, b []byte) error) error {
	for len(data) > 0 {
		var pair [2][]byte
		for i := range pair {
			n, w := binary.Uvarint(data)
			if w <= 0 || n > uint64(len(data)-w) {
				return fmt.Errorf("%w: truncated entry", ErrCorrupt)
			}
			pair[i] = data[w : w+int(n)]
			data = data[w+int(n):]
		}
		if err := fn(pair[0], pair[1]); err != nil {
			return err
		}
	}
	return nil
}
