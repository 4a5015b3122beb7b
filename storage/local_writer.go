package storage

import (
	"context"
	"errors"
	"os"
	"path/filepath"
)

// localWriter writes to a temporary file beside the target and renames it on Commit.
type localWriter struct {
	s    *localStorage
	ctx  context.Context // Create's context: bounds the writes
	name string
	tmp  string
	f    *os.File
	done bool
	wb   writeback
}

func (w *localWriter) Write(p []byte) (int, error) {
	if w.done {
		return 0, &Error{Op: "write", Path: w.s.uriOf(w.name), Kind: ErrWriterClosed}
	}
	if err := w.ctx.Err(); err != nil {
		return 0, &Error{Op: "write", Path: w.s.uriOf(w.name), Err: context.Cause(w.ctx)}
	}
	n, err := w.f.Write(p)
	if err != nil {
		c := classifyLocal(err)
		return n, &Error{Op: "write", Path: w.s.uriOf(w.name), Kind: c.kind, Attempts: 1, Err: err}
	}
	w.wb.wrote(w.f, n)
	return n, nil
}

func (w *localWriter) Commit(ctx context.Context) error {
	if w.done {
		return &Error{Op: "commit", Path: w.s.uriOf(w.name), Kind: ErrWriterClosed}
	}
	w.done = true
	err := w.s.r.do(ctx, "commit", w.s.uriOf(w.name), func(int) error {
		if err := w.ctx.Err(); err != nil {
			return context.Cause(w.ctx)
		}
		if err := w.f.Sync(); err != nil {
			return err
		}
		if err := w.f.Close(); err != nil {
			return err
		}
		w.f = nil
		if err := os.Rename(w.s.osPath(w.tmp), w.s.osPath(w.name)); err != nil {
			return err
		}
		return syncDir(filepath.Dir(w.s.osPath(w.name)))
	})
	if err != nil {
		w.discard()
	}
	return err
}

func (w *localWriter) Abort(ctx context.Context) error {
	if w.done {
		return nil
	}
	w.done = true
	return w.s.r.do(ctx, "abort", w.s.uriOf(w.name), func(int) error { return w.discard() })
}

// discard closes and removes the temporary file.
func (w *localWriter) discard() error {
	var cerr error
	if w.f != nil {
		cerr = w.f.Close()
		w.f = nil
	}
	rerr := os.Remove(w.s.osPath(w.tmp))
	if errors.Is(rerr, os.ErrNotExist) {
		rerr = nil
	}
	if cerr != nil && !errors.Is(cerr, os.ErrClosed) {
		return errors.Join(cerr, rerr)
	}
	return rerr
}
