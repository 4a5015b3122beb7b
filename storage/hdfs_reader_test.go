package storage

import (
	"bytes"
	"context"
	"errors"
	"io"
	"io/fs"
	"log/slog"
	"slices"
	"syscall"
	"testing"
	"time"
)

// flakyReader serves data from off and fails with err after limit bytes.
type flakyReader struct {
	data  []byte
	off   int
	limit int
	err   error
}

func (f *flakyReader) Read(p []byte) (int, error) {
	if f.off >= len(f.data) {
		return 0, io.EOF
	}
	if f.limit <= 0 {
		return 0, f.err
	}
	n := copy(p[:min(len(p), f.limit)], f.data[f.off:])
	f.off += n
	f.limit -= n
	return n, nil
}

func (f *flakyReader) Close() error { return nil }

// testReader is a resumingReader of hdfs://nn/x over the files open opens, retrying 3
// times without waiting.
func testReader(open func(off int64) seekReader) *resumingReader {
	return &resumingReader{
		ctx:      context.Background(),
		uri:      "hdfs://nn/x",
		open:     func(_ context.Context, off int64) (seekReader, error) { return open(off), nil },
		classify: func(err error) class { return classifyHDFS(err, nil) },
		policy:   RetryPolicy{Attempts: 3, InitialBackoff: time.Microsecond, MaxBackoff: time.Microsecond},
		log:      slog.New(slog.NewTextHandler(io.Discard, nil)),
	}
}

func TestResumingReader(t *testing.T) {
	data := bytes.Repeat([]byte("0123456789"), 1000)
	tests := []struct {
		name      string
		failAfter []int // bytes each successive open serves before failing
		err       error
		wantErr   error
		wantOpens []int64
	}{
		{name: "resumes after transient errors", failAfter: []int{3000, 2500, len(data)}, err: syscall.ECONNRESET,
			wantOpens: []int64{0, 3000, 5500}},
		{name: "fails on a permanent error", failAfter: []int{4000}, err: errors.New("checksum mismatch"),
			wantErr: errors.New("checksum mismatch"), wantOpens: []int64{0}},
		{name: "gives up after the attempts", failAfter: []int{100, 0, 0, 0}, err: syscall.ECONNRESET,
			wantErr: ErrUnavailable, wantOpens: []int64{0, 100, 100}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var opens []int64
			r := testReader(func(off int64) seekReader {
				i := len(opens)
				opens = append(opens, off)
				return &flakyReader{data: data, off: int(off), limit: tc.failAfter[i], err: tc.err}
			})
			got, err := io.ReadAll(r)
			if tc.wantErr == nil {
				if err != nil || !bytes.Equal(got, data) {
					t.Fatalf("ReadAll = %d bytes, %v; want all %d bytes", len(got), err, len(data))
				}
			} else if err == nil || !(errors.Is(err, tc.wantErr) || bytes.Contains([]byte(err.Error()), []byte(tc.wantErr.Error()))) {
				t.Fatalf("ReadAll error = %v, want %v", err, tc.wantErr)
			}
			if len(opens) != len(tc.wantOpens) {
				t.Fatalf("opened at offsets %v, want %v", opens, tc.wantOpens)
			}
			for i := range opens {
				if opens[i] != tc.wantOpens[i] {
					t.Fatalf("opened at offsets %v, want %v", opens, tc.wantOpens)
				}
			}
			if err := r.Close(); err != nil {
				t.Fatalf("Close: %v", err)
			}
		})
	}
}

// seekableReader is a flakyReader that seeks, failing with seekErr when set.
type seekableReader struct {
	flakyReader
	seekErr error
}

func (f *seekableReader) Seek(off int64, whence int) (int64, error) {
	if f.seekErr != nil || whence != io.SeekStart {
		return 0, f.seekErr
	}
	f.off = int(off)
	return off, nil
}

// A seek moves the next read: the open file seeks when it can, and is reopened at the
// offset when it cannot or its seek fails.
func TestResumingReaderSeek(t *testing.T) {
	data := []byte("0123456789abcdefghij")
	for _, tc := range []struct {
		name      string
		open      func(data []byte, off int64) seekReader
		wantOpens []int64
	}{
		{"seeks the open file", func(data []byte, off int64) seekReader {
			return &seekableReader{flakyReader: flakyReader{data: data, off: int(off), limit: len(data)}}
		}, []int64{0}},
		{"reopens a file that does not seek", func(data []byte, off int64) seekReader {
			return &flakyReader{data: data, off: int(off), limit: len(data)}
		}, []int64{0, 12, 3}},
		{"reopens after a failed seek", func(data []byte, off int64) seekReader {
			return &seekableReader{flakyReader: flakyReader{data: data, off: int(off), limit: len(data)}, seekErr: errors.New("seek refused")}
		}, []int64{0, 12, 3}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var opens []int64
			r := testReader(func(off int64) seekReader {
				opens = append(opens, off)
				return tc.open(data, off)
			})
			fr, err := r.open(context.Background(), 0)
			if err != nil {
				t.Fatal(err)
			}
			r.r = fr
			read := func(n int) string {
				t.Helper()
				b := make([]byte, n)
				if _, err := io.ReadFull(r, b); err != nil {
					t.Fatal(err)
				}
				return string(b)
			}
			if got := read(2); got != "01" {
				t.Fatalf("first read %q", got)
			}
			if off, err := r.Seek(12, io.SeekStart); err != nil || off != 12 {
				t.Fatalf("Seek(12, start) = %d, %v", off, err)
			}
			if got := read(3); got != "cde" {
				t.Fatalf("read after seeking to 12: %q, want cde", got)
			}
			if off, err := r.Seek(-12, io.SeekCurrent); err != nil || off != 3 {
				t.Fatalf("Seek(-12, current) = %d, %v", off, err)
			}
			if got := read(2); got != "34" {
				t.Fatalf("read after seeking back to 3: %q, want 34", got)
			}
			if _, err := r.Seek(0, io.SeekEnd); !errors.Is(err, fs.ErrInvalid) {
				t.Fatalf("Seek from the end: %v, want fs.ErrInvalid", err)
			}
			if _, err := r.Seek(-100, io.SeekCurrent); !errors.Is(err, fs.ErrInvalid) {
				t.Fatalf("Seek before the start: %v, want fs.ErrInvalid", err)
			}
			if !slices.Equal(opens, tc.wantOpens) {
				t.Fatalf("opened at %v, want %v", opens, tc.wantOpens)
			}
		})
	}
}
