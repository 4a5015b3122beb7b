package stream

import (
	"encoding/binary"
	"fmt"
	"strconv"
)

// fileSplit is a byte range of a file: the lines that start in (start, end], and the line
// at offset 0 when start is 0 (Hadoop's LineRecordReader rule: a range skips its first,
// possibly partial, line unless it starts the file, and reads the line that starts at its
// end, which the next range skips). end -1 reads to the end of the file.
type fileSplit struct {
	path  string
	start int64
	end   int64 // -1: to the end of the file
	// pos is the offset of the next line to read; start until the range is begun.
	pos int64
	// skipLines is the progress of a split checkpointed before ranges (a line count from
	// the start of the file): open skips that many lines and then reads by offset.
	skipLines int64
}

// splitFormatRanges marks the encoding with ranges. The encoding before it began with the
// line count as a zig-zag varint, which is never negative, so a negative first value tells
// the two apart and checkpoints and savepoints taken before ranges still restore.
const splitFormatRanges = -1

func (s fileSplit) id() string {
	if s.start == 0 && s.end < 0 {
		return s.path // a whole file keeps the ID it had before ranges
	}
	return s.path + "@" + strconv.FormatInt(s.start, 10)
}

func (s fileSplit) encode() Split {
	b := binary.AppendVarint(nil, splitFormatRanges)
	b = binary.AppendUvarint(b, uint64(s.start))
	b = binary.AppendVarint(b, s.end)
	b = binary.AppendUvarint(b, uint64(s.pos))
	b = binary.AppendUvarint(b, uint64(s.skipLines))
	b = append(b, s.path...)
	return Split{ID: s.id(), Data: b}
}

func decodeFileSplit(sp Split) (fileSplit, error) {
	d := NewDecoder(sp.Data)
	first := d.Varint()
	if d.Err() != nil {
		return fileSplit{}, fmt.Errorf("decoding file split %q: %w", sp.ID, d.Err())
	}
	if first >= 0 { // the encoding before ranges: lines read, then the path
		return fileSplit{path: string(sp.Data[len(sp.Data)-d.Remaining():]), end: -1, skipLines: first}, nil
	}
	if first != splitFormatRanges {
		return fileSplit{}, fmt.Errorf("decoding file split %q: format %d, expected %d", sp.ID, first, splitFormatRanges)
	}
	s := fileSplit{start: int64(d.Uvarint()), end: d.Varint(), pos: int64(d.Uvarint()), skipLines: int64(d.Uvarint())}
	if d.Err() != nil {
		return fileSplit{}, fmt.Errorf("decoding file split %q: %w", sp.ID, d.Err())
	}
	if s.start < 0 || s.pos < s.start || s.end < -1 || (s.end >= 0 && s.end < s.start) || s.skipLines < 0 {
		return fileSplit{}, fmt.Errorf("decoding file split %q: range start %d, end %d, position %d, lines to skip %d do not fit together", sp.ID, s.start, s.end, s.pos, s.skipLines)
	}
	s.path = string(sp.Data[len(sp.Data)-d.Remaining():])
	return s, nil
}

// fileRanges cuts a file of size bytes into ranges of about splitSize bytes, all of about
// the same size; the last one reads to the end of the file, so lines appended after the
// listing are read as they were before ranges.
func fileRanges(path string, size, splitSize int64) []fileSplit {
	n := int64(1)
	if splitSize > 0 && size > splitSize {
		n = (size + splitSize - 1) / splitSize
	}
	out := make([]fileSplit, 0, n)
	for i := range n {
		start := i * size / n
		end := int64(-1)
		if i < n-1 {
			end = (i + 1) * size / n
		}
		out = append(out, fileSplit{path: path, start: start, end: end, pos: start})
	}
	return out
}
