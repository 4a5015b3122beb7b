package storage

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"os"
)

// spillChunk is the write buffer in front of a spill file and the copy buffer of each replay.
const spillChunk = 256 << 10

// spillBuffer holds the bytes of one file so that they can be replayed from the start any
// number of times: up to limit bytes in memory, beyond that everything in a local temporary
// file. Memory stays below limit+spillChunk whatever the file's size. The temporary file is
// unlinked as soon as it is created (where the OS allows it), so that not even a crash leaves
// it behind; Close releases it.
type spillBuffer struct {
	dir   string // where spill files go; "" means os.TempDir()
	limit int    // bytes kept in memory; negative spills from the first byte

	mem    []byte
	f      *os.File      // the spill file, once the data outgrew limit
	fw     *bufio.Writer // buffers small writes to f
	remove string        // f's path while it still has to be removed on Close
	size   int64
}

func newSpillBuffer(dir string, limit int) *spillBuffer {
	return &spillBuffer{dir: dir, limit: limit}
}

// Size is the number of bytes written.
func (b *spillBuffer) Size() int64 { return b.size }

// Spilled reports whether the bytes live in a local file.
func (b *spillBuffer) Spilled() bool { return b.f != nil }

func (b *spillBuffer) Write(p []byte) (int, error) {
	if b.f == nil {
		if len(b.mem)+len(p) <= b.limit {
			b.grow(len(p))
			b.mem = append(b.mem, p...)
			b.size += int64(len(p))
			return len(p), nil
		}
		if len(p) == 0 {
			return 0, nil
		}
		if err := b.spill(); err != nil {
			return 0, err
		}
	}
	n, err := b.fw.Write(p)
	b.size += int64(n)
	if err != nil {
		return n, fmt.Errorf("writing spill file %s: %w", b.f.Name(), err)
	}
	return n, nil
}

// grow makes room for n more bytes in memory without letting append overshoot limit.
func (b *spillBuffer) grow(n int) {
	need := len(b.mem) + n
	if need <= cap(b.mem) {
		return
	}
	c := min(max(2*cap(b.mem), need, 64<<10), max(b.limit, need))
	m := make([]byte, len(b.mem), c)
	copy(m, b.mem)
	b.mem = m
}

// spill moves the bytes held in memory to a new temporary file.
func (b *spillBuffer) spill() error {
	f, err := os.CreateTemp(b.dir, "tide-spill-*")
	if err != nil {
		return fmt.Errorf("creating a spill file in %q: %w", b.dirName(), err)
	}
	if os.Remove(f.Name()) != nil {
		b.remove = f.Name() // this OS keeps open files' names; remove it on Close
	}
	b.f = f
	b.fw = bufio.NewWriterSize(f, spillChunk)
	if _, err := b.fw.Write(b.mem); err != nil {
		return fmt.Errorf("writing spill file %s: %w", f.Name(), err)
	}
	b.mem = nil
	return nil
}

func (b *spillBuffer) dirName() string {
	if b.dir == "" {
		return os.TempDir()
	}
	return b.dir
}

// WriteTo writes every byte from the start to w, using buf (spillChunk bytes or more) to copy
// from the spill file. It may be called again after a failure.
func (b *spillBuffer) WriteTo(w io.Writer, buf []byte) (int64, error) {
	return b.WriteRange(w, buf, 0, b.size)
}

// WriteRange writes bytes [off, end) to w, using buf (spillChunk bytes or more) to copy from
// the spill file. It may be called again, for any range, after a failure.
func (b *spillBuffer) WriteRange(w io.Writer, buf []byte, off, end int64) (int64, error) {
	if off < 0 || end > b.size || off > end {
		return 0, fmt.Errorf("spill buffer: range [%d, %d) outside its %d bytes", off, end, b.size)
	}
	if off == end {
		return 0, nil // an empty write would make colinmarc/hdfs allocate an empty block
	}
	if b.f == nil {
		n, err := w.Write(b.mem[off:end])
		return int64(n), err
	}
	if err := b.fw.Flush(); err != nil {
		return 0, fmt.Errorf("writing spill file %s: %w", b.f.Name(), err)
	}
	r := io.NewSectionReader(b.f, off, end-off)
	var written int64
	for {
		n, rerr := r.Read(buf)
		if n > 0 {
			m, werr := w.Write(buf[:n])
			written += int64(m)
			if werr != nil {
				return written, werr
			}
		}
		if errors.Is(rerr, io.EOF) {
			return written, nil
		}
		if rerr != nil {
			return written, fmt.Errorf("reading spill file %s at byte %d: %w", b.f.Name(), off+written, rerr)
		}
	}
}

// Close releases the memory and the spill file; calling it again does nothing.
func (b *spillBuffer) Close() error {
	b.mem = nil
	if b.f == nil {
		return nil
	}
	name := b.f.Name()
	err := b.f.Close()
	b.f, b.fw = nil, nil
	if b.remove != "" {
		if rerr := os.Remove(b.remove); rerr != nil && !errors.Is(rerr, os.ErrNotExist) {
			err = errors.Join(err, rerr)
		}
		b.remove = ""
	}
	if err != nil {
		return fmt.Errorf("releasing spill file %s: %w", name, err)
	}
	return nil
}
