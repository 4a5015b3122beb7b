package storage

import (
	"bytes"
	"errors"
	"io"
	"io/fs"
	"testing"
	"time"
)

// sizedReader serves data in reads of at most step bytes and claims the file has size bytes;
// with failAt > 0 it fails with errBroken once failAt bytes are served.
type sizedReader struct {
	data    []byte
	step    int
	size    int64
	statErr error
	failAt  int
	served  int
}

var errBroken = errors.New("connection reset")

func (r *sizedReader) Read(p []byte) (int, error) {
	if r.failAt > 0 && r.served >= r.failAt {
		return 0, errBroken
	}
	if len(r.data) == 0 {
		return 0, io.EOF
	}
	n := min(len(p), r.step, len(r.data))
	if r.failAt > 0 {
		n = min(n, r.failAt-r.served)
	}
	copy(p, r.data[:n])
	r.data = r.data[n:]
	r.served += n
	return n, nil
}

func (r *sizedReader) Stat() (fs.FileInfo, error) {
	if r.statErr != nil {
		return nil, r.statErr
	}
	return sizeInfo(r.size), nil
}

// sizeInfo is a fs.FileInfo that knows only a size.
type sizeInfo int64

func (s sizeInfo) Name() string       { return "f" }
func (s sizeInfo) Size() int64        { return int64(s) }
func (s sizeInfo) Mode() fs.FileMode  { return 0o644 }
func (s sizeInfo) ModTime() time.Time { return time.Time{} }
func (s sizeInfo) IsDir() bool        { return false }
func (s sizeInfo) Sys() any           { return nil }

func TestReadAll(t *testing.T) {
	data := bytes.Repeat([]byte("0123456789abcdef"), 4096) // 64 KiB
	tests := []struct {
		name    string
		r       io.Reader
		want    []byte
		wantErr error
		wantCap int // cap of the result when it must be the presized buffer; 0 = any
	}{
		{name: "exact size", r: &sizedReader{data: data, step: 1000, size: int64(len(data))},
			want: data, wantCap: len(data) + 1},
		{name: "exact size in one read", r: &sizedReader{data: data, step: 1 << 20, size: int64(len(data))},
			want: data, wantCap: len(data) + 1},
		{name: "file longer than its size", r: &sizedReader{data: data, step: 3000, size: 100}, want: data},
		{name: "file shorter than its size", r: &sizedReader{data: data[:500], step: 64, size: int64(len(data))},
			want: data[:500], wantCap: len(data) + 1},
		{name: "unknown size", r: &sizedReader{data: data, step: 777, size: 0}, want: data},
		{name: "stat fails", r: &sizedReader{data: data, step: 777, statErr: fs.ErrInvalid}, want: data},
		{name: "empty file", r: &sizedReader{size: 0}, want: []byte{}},
		{name: "no stat", r: bytes.NewReader(data), want: data},
		{name: "read error", r: &sizedReader{data: data, step: 4096, size: int64(len(data)), failAt: 10000},
			want: data[:10000], wantErr: errBroken},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, err := readAll(tc.r)
			if !errors.Is(err, tc.wantErr) {
				t.Fatalf("readAll error = %v, want %v", err, tc.wantErr)
			}
			if !bytes.Equal(got, tc.want) {
				t.Fatalf("readAll = %d bytes, want %d bytes", len(got), len(tc.want))
			}
			if tc.wantCap > 0 && cap(got) != tc.wantCap {
				t.Fatalf("readAll buffer cap = %d, want the presized %d (no regrowth)", cap(got), tc.wantCap)
			}
		})
	}
}
