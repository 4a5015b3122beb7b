package storage

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"path"

	"github.com/colinmarc/hdfs/v2"
)

// hdfsWriter buffers up to Options.BufferSize bytes so that Commit can retry the whole upload;
// past that it streams to a temporary file, and Commit closes and renames it.
type hdfsWriter struct {
	s    *hdfsStorage
	ctx  context.Context // Create's context: bounds the streamed uploads
	name string

	buf       bytes.Buffer
	streaming bool
	fw        *hdfs.FileWriter
	tmp       string // name of the temporary file, once one exists
	written   int64
	failed    error // sticky: a streamed write failed
	done      bool
}

func (w *hdfsWriter) uri() string { return w.s.uriOf(w.name) }

func (w *hdfsWriter) Write(p []byte) (int, error) {
	switch {
	case w.done:
		return 0, &Error{Op: "write", Path: w.uri(), Kind: ErrWriterClosed}
	case w.failed != nil:
		return 0, w.failed
	case w.ctx.Err() != nil:
		return 0, &Error{Op: "write", Path: w.uri(), Err: context.Cause(w.ctx)}
	}
	if !w.streaming {
		if w.buf.Len()+len(p) <= w.s.opts.BufferSize {
			w.buf.Write(p)
			w.written += int64(len(p))
			return len(p), nil
		}
		if err := w.startStreaming(); err != nil {
			w.failed = err
			return 0, err
		}
	}
	if len(p) == 0 {
		return 0, nil // an empty write would allocate a block that never gets data
	}
	n, err := w.fw.Write(p)
	w.written += int64(n)
	if err != nil {
		err = describeRemote(err)
		c := w.s.classify(err)
		w.failed = &Error{Op: "write", Path: w.uri(), Kind: c.kind, Dir: c.dir, Attempts: 1, Err: err}
		if c.transient && c.kind == nil {
			w.failed.(*Error).Kind = ErrUnavailable
		}
		return n, w.failed
	}
	return n, nil
}

// startStreaming creates the temporary file and writes the buffered bytes to it, retrying
// both as one unit.
func (w *hdfsWriter) startStreaming() error {
	err := w.s.call(w.ctx, "create", w.name, func(c *hdfs.Client) error {
		fw, err := w.createTemp(c)
		if err != nil {
			return err
		}
		if w.buf.Len() > 0 {
			if _, err := fw.Write(w.buf.Bytes()); err != nil {
				_ = fw.Close()
				return err
			}
		}
		if dl, ok := w.ctx.Deadline(); ok {
			if err := fw.SetDeadline(dl); err != nil {
				_ = fw.Close()
				return err
			}
		}
		w.fw = fw
		return nil
	})
	if err != nil {
		w.removeTemp()
		return err
	}
	w.buf = bytes.Buffer{}
	w.streaming = true
	return nil
}

// createTemp creates a fresh temporary file (removing the one of an earlier attempt).
func (w *hdfsWriter) createTemp(c *hdfs.Client) (*hdfs.FileWriter, error) {
	if w.tmp != "" {
		_ = c.Remove(w.s.hdfsPath(w.tmp)) // leftover of a failed attempt; best effort
	}
	w.tmp = tempName(w.name)
	p := w.s.hdfsPath(w.tmp)
	if err := c.MkdirAll(path.Dir(p), 0o755); err != nil {
		return nil, err
	}
	return c.Create(p)
}

func (w *hdfsWriter) Commit(ctx context.Context) error {
	if w.done {
		return &Error{Op: "commit", Path: w.uri(), Kind: ErrWriterClosed}
	}
	w.done = true
	if w.failed != nil {
		w.discard(ctx)
		return w.failed
	}
	var err error
	if w.streaming {
		err = w.commitStreamed(ctx)
	} else {
		err = w.commitBuffered(ctx)
	}
	if err != nil {
		w.discard(ctx)
	}
	return err
}

// commitBuffered uploads the buffer to a temporary file and renames it into place; any
// transient failure repeats the whole upload.
func (w *hdfsWriter) commitBuffered(ctx context.Context) error {
	return w.s.call(ctx, "commit", w.name, func(c *hdfs.Client) error {
		fw, err := w.createTemp(c)
		if err != nil {
			return err
		}
		if dl, ok := ctx.Deadline(); ok {
			_ = fw.SetDeadline(dl) // only fails for a broken block writer, which Write reports
		}
		if w.buf.Len() > 0 {
			if _, err := fw.Write(w.buf.Bytes()); err != nil {
				_ = fw.Close()
				return err
			}
		}
		if err := closeFile(ctx, fw); err != nil {
			return err
		}
		return w.s.renameOver(c, w.tmp, w.name)
	})
}

// commitStreamed closes the streamed temporary file and renames it into place.
func (w *hdfsWriter) commitStreamed(ctx context.Context) error {
	err := w.s.r.do(ctx, "commit", w.uri(), func(int) error { return describeRemote(closeFile(ctx, w.fw)) })
	if err != nil {
		return err
	}
	w.fw = nil
	return w.s.call(ctx, "commit", w.name, func(c *hdfs.Client) error {
		err := w.s.renameOver(c, w.tmp, w.name)
		if err != nil && errors.Is(err, fs.ErrNotExist) {
			// An earlier attempt may have renamed it before its reply was lost.
			if st, serr := c.Stat(w.s.hdfsPath(w.name)); serr == nil && !st.IsDir() && st.Size() == w.written {
				if _, terr := c.Stat(w.s.hdfsPath(w.tmp)); errors.Is(terr, fs.ErrNotExist) {
					return nil
				}
			}
		}
		return err
	})
}

// closeFile closes fw, repeating while the namenode says the last block is still replicating
// (what the Java client does too).
func closeFile(ctx context.Context, fw *hdfs.FileWriter) error {
	for i := 0; ; i++ {
		err := fw.Close()
		if err == nil || !errors.Is(err, hdfs.ErrReplicating) || i >= 20 {
			if err != nil {
				return fmt.Errorf("closing the temporary file: %w", err)
			}
			return nil
		}
		if err := sleepCtx(ctx, defaultInitialBackoff/4<<min(i, 4)); err != nil {
			return err
		}
	}
}

func (w *hdfsWriter) Abort(ctx context.Context) error {
	if w.done {
		return nil
	}
	w.done = true
	return w.discard(ctx)
}

// discard closes and removes the temporary file, if any.
func (w *hdfsWriter) discard(ctx context.Context) error {
	if w.fw != nil {
		_ = w.fw.Close() // the file is removed next; its close error does not matter
		w.fw = nil
	}
	w.buf = bytes.Buffer{}
	if w.tmp == "" {
		return nil
	}
	tmp := w.tmp
	return w.s.call(ctx, "abort", w.name, func(c *hdfs.Client) error {
		err := c.Remove(w.s.hdfsPath(tmp))
		if errors.Is(err, fs.ErrNotExist) {
			return nil
		}
		return err
	})
}

// removeTemp removes the temporary file of a failed start, best effort.
func (w *hdfsWriter) removeTemp() {
	if w.tmp == "" {
		return
	}
	if c, err := w.s.getClient(); err == nil {
		_ = c.Remove(w.s.hdfsPath(w.tmp))
	}
}
