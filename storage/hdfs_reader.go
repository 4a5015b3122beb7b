package storage

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"log/slog"

	"github.com/colinmarc/hdfs/v2"
)

// seekReader is the part of *hdfs.FileReader the resuming reader needs.
type seekReader interface {
	io.Reader
	io.Closer
}

// resumingReader reads a committed file; after a transient error (a datanode restart, a
// dropped connection) it reopens the file at the offset reached and goes on, up to
// policy.Attempts times in a row.
type resumingReader struct {
	ctx      context.Context // Open's context: bounds reopening
	uri      string
	open     func(ctx context.Context, off int64) (seekReader, error) // opens at off, with retries
	classify func(error) class
	policy   RetryPolicy
	log      *slog.Logger

	info   fs.FileInfo // the file as Open found it, when known
	r      seekReader
	off    int64
	closed bool
}

// Stat describes the file as it was when opened; ReadFile sizes its buffer by it.
func (r *resumingReader) Stat() (fs.FileInfo, error) {
	if r.info == nil {
		return nil, &Error{Op: "stat", Path: r.uri, Err: fmt.Errorf("size of %s not known: %w", r.uri, fs.ErrInvalid)}
	}
	return r.info, nil
}

func (r *resumingReader) Read(p []byte) (int, error) {
	if r.closed {
		return 0, &Error{Op: "read", Path: r.uri, Err: fs.ErrClosed}
	}
	for failures := 0; ; {
		if r.r == nil {
			fr, err := r.open(r.ctx, r.off)
			if err != nil {
				return 0, err
			}
			r.r = fr
		}
		n, err := r.r.Read(p)
		r.off += int64(n)
		if err == nil || errors.Is(err, io.EOF) {
			return n, err
		}
		failures++
		c := r.classify(err)
		if !c.transient || failures >= r.policy.Attempts {
			kind := c.kind
			if c.transient && kind == nil {
				kind = ErrUnavailable
			}
			return n, &Error{Op: "read", Path: r.uri, Kind: kind, Attempts: failures, Err: err}
		}
		r.log.Warn("storage: read failed, reopening", "path", r.uri, "offset", r.off, "attempt", failures, "err", err)
		_ = r.r.Close() // broken already; its close error adds nothing
		r.r = nil
		if n > 0 {
			return n, nil
		}
		if err := sleepCtx(r.ctx, jitter(r.policy.backoff(failures))); err != nil {
			return 0, &Error{Op: "read", Path: r.uri, Attempts: failures, Err: err}
		}
	}
}

// Seek moves the next Read to offset (io.SeekStart or io.SeekCurrent): a reader of a
// range of a file starts at its range. The open file seeks when it can; otherwise the
// file is reopened at offset by the next Read.
func (r *resumingReader) Seek(offset int64, whence int) (int64, error) {
	if r.closed {
		return 0, &Error{Op: "seek", Path: r.uri, Err: fs.ErrClosed}
	}
	switch whence {
	case io.SeekStart:
	case io.SeekCurrent:
		offset += r.off
	default:
		return r.off, &Error{Op: "seek", Path: r.uri, Err: fmt.Errorf("whence %d: want io.SeekStart or io.SeekCurrent: %w", whence, fs.ErrInvalid)}
	}
	if offset < 0 {
		return r.off, &Error{Op: "seek", Path: r.uri, Err: fmt.Errorf("offset %d: %w", offset, fs.ErrInvalid)}
	}
	if r.r != nil {
		if s, ok := r.r.(io.Seeker); !ok || seekTo(s, offset) != nil {
			_ = r.r.Close() // reopened at offset by the next Read
			r.r = nil
		}
	}
	r.off = offset
	return offset, nil
}

func seekTo(s io.Seeker, offset int64) error {
	_, err := s.Seek(offset, io.SeekStart)
	return err
}

func (r *resumingReader) Close() error {
	if r.closed {
		return nil
	}
	r.closed = true
	if r.r == nil {
		return nil
	}
	if err := r.r.Close(); err != nil {
		return &Error{Op: "close", Path: r.uri, Err: err}
	}
	return nil
}

// openAt opens the HDFS file p at offset off.
func openAt(ctx context.Context, c *hdfs.Client, p string, off int64) (*hdfs.FileReader, error) {
	fr, err := c.Open(p)
	if err != nil {
		return nil, err
	}
	if fr.Stat().IsDir() {
		_ = fr.Close()
		return nil, fmt.Errorf("%s is a directory, want a file: %w", p, fs.ErrInvalid)
	}
	if dl, ok := ctx.Deadline(); ok {
		_ = fr.SetDeadline(dl) // fails only for a broken block reader, which Read reports
	}
	if off > 0 {
		if _, err := fr.Seek(off, io.SeekStart); err != nil {
			_ = fr.Close()
			return nil, err
		}
	}
	return fr, nil
}
