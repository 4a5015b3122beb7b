package storage

import (
	"bytes"
	"context"
	"errors"
	"io"
	"log/slog"
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
			r := &resumingReader{
				ctx: context.Background(),
				uri: "hdfs://nn/x",
				open: func(_ context.Context, off int64) (seekReader, error) {
					i := len(opens)
					opens = append(opens, off)
					return &flakyReader{data: data, off: int(off), limit: tc.failAfter[i], err: tc.err}, nil
				},
				classify: func(err error) class { return classifyHDFS(err, nil) },
				policy:   RetryPolicy{Attempts: 3, InitialBackoff: time.Microsecond, MaxBackoff: time.Microsecond},
				log:      slog.New(slog.NewTextHandler(io.Discard, nil)),
			}
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
