package storage

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"path"
	"time"

	"github.com/colinmarc/hdfs/v2"
)

// hdfsWriter collects the file's bytes in a spillBuffer (memory up to Options.BufferSize, a
// local temporary file beyond) and uploads them on Commit. Because the bytes can always be
// replayed, a transient failure anywhere in the upload (the namenode refusing the next block
// with NotReplicatedYetException, a datanode dropping the pipeline, a namenode restart or
// safe mode) repeats the whole upload under the storage's bounded backoff. colinmarc/hdfs
// cannot resume a FileWriter, so a whole repeat is the only retry there is.
type hdfsWriter struct {
	s    *hdfsStorage
	ctx  context.Context // Create's context: once it ends, the writer can neither write nor commit
	name string

	data     *spillBuffer
	copyBuf  []byte // replay buffer, allocated on the first upload of a spilled file
	tmp      string // name of the HDFS temporary file of the latest attempt, if any
	attempts int    // uploads started
	failed   error  // sticky: writing to the spill buffer failed
	done     bool
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
	n, err := w.data.Write(p)
	if err != nil {
		w.failed = &Error{Op: "write", Path: w.uri(), Kind: classifyLocal(err).kind, Attempts: 1, Err: err}
		return n, w.failed
	}
	return n, nil
}

func (w *hdfsWriter) Commit(ctx context.Context) error {
	if w.done {
		return &Error{Op: "commit", Path: w.uri(), Kind: ErrWriterClosed}
	}
	w.done = true
	defer w.release()
	if w.failed != nil {
		w.discard(ctx)
		return w.failed
	}
	if err := w.ctx.Err(); err != nil {
		return &Error{Op: "commit", Path: w.uri(), Err: fmt.Errorf("the writer's create context ended: %w", context.Cause(w.ctx))}
	}
	cctx, cancel := w.commitContext(ctx)
	defer cancel()
	err := w.s.call(cctx, "commit", w.name, func(c *hdfs.Client) error { return w.upload(cctx, c) })
	if err != nil {
		// Remove the temporary file even when ctx has ended, within the usual RPC bound.
		dctx, dcancel := context.WithTimeout(context.WithoutCancel(ctx), w.s.opts.RPCTimeout)
		defer dcancel()
		w.discard(dctx)
	}
	return err
}

// commitContext is ctx, ended early when the writer's Create context ends.
func (w *hdfsWriter) commitContext(ctx context.Context) (context.Context, context.CancelFunc) {
	cctx, cancel := context.WithCancelCause(ctx)
	stop := context.AfterFunc(w.ctx, func() { cancel(context.Cause(w.ctx)) })
	return cctx, func() { stop(); cancel(nil) }
}

// upload writes every byte to a fresh temporary file, closes it and renames it into place: one
// attempt of the commit.
func (w *hdfsWriter) upload(ctx context.Context, c *hdfs.Client) error {
	w.attempts++
	if w.attempts > 1 {
		w.s.r.log.Info("storage: uploading the whole file again", "path", w.uri(), "attempt", w.attempts,
			"bytes", w.data.Size(), "spilled", w.data.Spilled())
	}
	fw, err := w.createTemp(c)
	if err != nil {
		return err
	}
	if dl, ok := w.deadline(ctx); ok {
		_ = fw.SetDeadline(dl) // only fails for a broken block writer, which Write reports
	}
	var dst io.Writer = fw
	if w.s.wrapUpload != nil {
		dst = w.s.wrapUpload(w.attempts, dst)
	}
	if w.data.Spilled() && w.copyBuf == nil {
		w.copyBuf = make([]byte, spillChunk)
	}
	if n, err := w.data.WriteTo(dst, w.copyBuf); err != nil {
		_ = fw.Close() // the attempt failed already; the close only releases the datanode connection
		return fmt.Errorf("uploading to %s after %d of %d bytes: %w", w.s.uriOf(w.tmp), n, w.data.Size(), err)
	}
	if err := closeFile(ctx, fw); err != nil {
		return err
	}
	return w.s.renameOver(c, w.tmp, w.name)
}

// deadline is the earlier of the deadlines of ctx and of the writer's Create context.
func (w *hdfsWriter) deadline(ctx context.Context) (time.Time, bool) {
	dl, ok := ctx.Deadline()
	if cdl, cok := w.ctx.Deadline(); cok && (!ok || cdl.Before(dl)) {
		return cdl, true
	}
	return dl, ok
}

// createTemp creates a fresh temporary file (removing the one of an earlier attempt).
func (w *hdfsWriter) createTemp(c *hdfs.Client) (*hdfs.FileWriter, error) {
	if w.tmp != "" {
		_ = c.Remove(w.s.hdfsPath(w.tmp)) // leftover of a failed attempt; best effort, discard retries
	}
	w.tmp = tempName(w.name)
	p := w.s.hdfsPath(w.tmp)
	if err := c.MkdirAll(path.Dir(p), 0o755); err != nil {
		return nil, err
	}
	return c.Create(p)
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
	defer w.release()
	return w.discard(ctx)
}

// release frees the buffered bytes and removes the local spill file.
func (w *hdfsWriter) release() {
	if err := w.data.Close(); err != nil {
		w.s.r.log.Warn("storage: releasing the local copy of a file", "path", w.uri(), "err", err)
	}
	w.copyBuf = nil
}

// discard removes the HDFS temporary file of the latest attempt, if any.
func (w *hdfsWriter) discard(ctx context.Context) error {
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
