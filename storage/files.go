package storage

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"math"
)

// WriteFile creates name with data and commits it (replacing an existing file atomically).
func WriteFile(ctx context.Context, s Storage, name string, data []byte) error {
	w, err := s.Create(ctx, name)
	if err != nil {
		return err
	}
	if _, err := w.Write(data); err != nil {
		if aerr := w.Abort(ctx); aerr != nil {
			return errors.Join(err, aerr)
		}
		return err
	}
	return w.Commit(ctx)
}

// ReadFile returns the contents of name.
func ReadFile(ctx context.Context, s Storage, name string) ([]byte, error) {
	r, err := s.Open(ctx, name)
	if err != nil {
		return nil, err
	}
	data, err := readAll(r)
	cerr := r.Close()
	if err != nil {
		return nil, fmt.Errorf("reading %s under %s: %w", name, s.URI(), err)
	}
	if cerr != nil {
		return nil, fmt.Errorf("closing %s under %s: %w", name, s.URI(), cerr)
	}
	return data, nil
}

// statReader is a reader that knows the size of the file it reads: *os.File, and the reader
// of an HDFS file.
type statReader interface {
	Stat() (fs.FileInfo, error)
}

// readAll reads r to its end. When r knows its file's size the bytes land in one buffer of
// that size (plus a byte, so that the final read sees the end without growing it);
// io.ReadAll would fill a chain of growing buffers and copy them into a third, which for a
// large file costs more than reading it. A file longer than its size said is still read whole.
func readAll(r io.Reader) ([]byte, error) {
	sr, ok := r.(statReader)
	if !ok {
		return io.ReadAll(r)
	}
	fi, err := sr.Stat()
	if err != nil || fi.Size() <= 0 || fi.Size() >= math.MaxInt {
		return io.ReadAll(r)
	}
	buf := make([]byte, 0, int(fi.Size())+1)
	for {
		n, err := r.Read(buf[len(buf):cap(buf)])
		buf = buf[:len(buf)+n]
		if err == io.EOF {
			return buf, nil
		}
		if err != nil {
			return buf, err
		}
		if len(buf) == cap(buf) {
			buf = append(buf, 0)[:len(buf)]
		}
	}
}
