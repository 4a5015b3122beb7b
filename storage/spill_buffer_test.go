package storage

import (
	"bytes"
	"errors"
	"os"
	"testing"
)

// shortWriter accepts max bytes, then fails.
type shortWriter struct {
	bytes.Buffer
	max int
}

var errShort = errors.New("short writer full")

func (w *shortWriter) Write(p []byte) (int, error) {
	if room := w.max - w.Len(); len(p) > room {
		w.Buffer.Write(p[:room])
		return room, errShort
	}
	return w.Buffer.Write(p)
}

func TestSpillBuffer(t *testing.T) {
	pattern := func(n int) []byte {
		b := make([]byte, n)
		for i := range b {
			b[i] = byte(i*13 + i>>10)
		}
		return b
	}
	for _, tc := range []struct {
		name        string
		limit       int
		size        int
		chunk       int // bytes per Write
		wantSpilled bool
	}{
		{"empty", 1 << 10, 0, 1, false},
		{"fits exactly", 1 << 10, 1 << 10, 100, false},
		{"one byte over", 1 << 10, 1<<10 + 1, 100, true},
		{"always spill", -1, 10, 3, true},
		{"always spill, empty", -1, 0, 1, false},
		{"multi MiB in small writes", 64 << 10, 3<<20 + 17, 4 << 10, true},
		{"one big write", 64 << 10, 2 << 20, 2 << 20, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			b := newSpillBuffer(dir, tc.limit)
			data := pattern(tc.size)
			for off := 0; off < len(data); off += tc.chunk {
				end := min(off+tc.chunk, len(data))
				if n, err := b.Write(data[off:end]); err != nil || n != end-off {
					t.Fatalf("Write(%d bytes at %d) = %d, %v", end-off, off, n, err)
				}
				if cap(b.mem) > max(tc.limit, 0) {
					t.Fatalf("after %d bytes: %d bytes of memory, want at most the limit %d", end, cap(b.mem), tc.limit)
				}
			}
			if b.Size() != int64(len(data)) || b.Spilled() != tc.wantSpilled {
				t.Fatalf("Size() = %d, Spilled() = %v; want %d, %v", b.Size(), b.Spilled(), len(data), tc.wantSpilled)
			}
			buf := make([]byte, spillChunk)
			// A failed replay does not disturb the next one.
			if len(data) > 1 {
				sw := &shortWriter{max: len(data) / 2}
				if n, err := b.WriteTo(sw, buf); !errors.Is(err, errShort) || n != int64(len(data)/2) {
					t.Fatalf("WriteTo(a writer full after %d bytes) = %d, %v; want %d, %v", len(data)/2, n, err, len(data)/2, errShort)
				}
			}
			for replay := range 2 {
				var out bytes.Buffer
				n, err := b.WriteTo(&out, buf)
				if err != nil || n != int64(len(data)) || !bytes.Equal(out.Bytes(), data) {
					t.Fatalf("replay %d: WriteTo = %d bytes, %v; want the %d bytes written", replay, n, err, len(data))
				}
			}
			// Ranges, as block upload sessions replay them: any range, in any order.
			for _, r := range [][2]int{{len(data) / 3, len(data)}, {0, len(data) / 3}, {len(data) / 2, len(data)/2 + 1}, {len(data), len(data)}} {
				if r[1] > len(data) || r[0] > r[1] {
					continue
				}
				var out bytes.Buffer
				n, err := b.WriteRange(&out, buf, int64(r[0]), int64(r[1]))
				if err != nil || n != int64(r[1]-r[0]) || !bytes.Equal(out.Bytes(), data[r[0]:r[1]]) {
					t.Fatalf("WriteRange(%d, %d) = %d bytes, %v; want bytes %d-%d", r[0], r[1], n, err, r[0], r[1])
				}
			}
			if _, err := b.WriteRange(&bytes.Buffer{}, buf, 0, int64(len(data))+1); err == nil {
				t.Fatalf("WriteRange past the end: no error")
			}
			entries, err := os.ReadDir(dir)
			if err != nil {
				t.Fatal(err)
			}
			if len(entries) != 0 {
				t.Fatalf("spill dir holds %d entries while the buffer is open, want 0 (unlinked at creation)", len(entries))
			}
			if err := b.Close(); err != nil {
				t.Fatalf("Close: %v", err)
			}
			if err := b.Close(); err != nil {
				t.Fatalf("second Close: %v", err)
			}
			if b.Spilled() || b.mem != nil {
				t.Fatalf("after Close: Spilled() = %v, %d bytes of memory; want both released", b.Spilled(), len(b.mem))
			}
		})
	}
}

func TestSpillBufferMissingDir(t *testing.T) {
	dir := t.TempDir() + "/missing"
	b := newSpillBuffer(dir, 4)
	if _, err := b.Write([]byte("abc")); err != nil {
		t.Fatalf("Write within the memory limit: %v", err)
	}
	_, err := b.Write([]byte("de"))
	if !errors.Is(err, os.ErrNotExist) || !bytes.Contains([]byte(err.Error()), []byte(dir)) {
		t.Fatalf("Write past the limit with a missing spill dir = %v, want ErrNotExist naming %s", err, dir)
	}
	if err := b.Close(); err != nil {
		t.Fatalf("Close: %v", err)
	}
}
