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
// local temporary file beyond) and uploads them on Commit to a temporary file, which it then
// renames into place. A file of up to sessionBlocks blocks is uploaded in one go (the namenode
// cannot refuse its second block as not replicated yet), and a transient failure repeats that
// upload under the storage's bounded backoff. A bigger file goes up in block-aligned sessions
// (blockUpload): a failure costs only what its session had not got acknowledged.
type hdfsWriter struct {
	s    *hdfsStorage
	ctx  context.Context // Create's context: once it ends, the writer can neither write nor commit
	name string

	data     *spillBuffer
	copyBuf  []byte // replay buffer, allocated on the first upload of a spilled file
	tmp      string // name of the HDFS temporary file of the latest attempt, if any
	sessions int    // uploads (small files) or upload sessions (block uploads) started
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
	var blockSize int64
	err := w.s.call(cctx, "commit", w.name, func(c *hdfs.Client) error {
		d, err := c.ServerDefaults()
		blockSize = d.BlockSize
		return err
	})
	switch {
	case err != nil:
	case blockSize > 0 && w.data.Size() > sessionBlocks*blockSize:
		err = w.uploadBlocks(cctx, blockSize)
	default:
		err = w.s.call(cctx, "commit", w.name, func(c *hdfs.Client) error { return w.upload(cctx, c) })
	}
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
// attempt of the commit of a file of at most sessionBlocks blocks.
func (w *hdfsWriter) upload(ctx context.Context, c *hdfs.Client) error {
	w.sessions++
	if w.sessions > 1 {
		w.s.r.log.Info("storage: uploading the whole file again", "path", w.uri(), "attempt", w.sessions,
			"bytes", w.data.Size(), "spilled", w.data.Spilled())
	}
	fw, err := w.createTemp(c)
	if err != nil {
		return err
	}
	if dl, ok := w.deadline(ctx); ok {
		_ = fw.SetDeadline(dl) // only fails for a broken block writer, which Write reports
	}
	dst := w.uploadDest(fw)
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

// uploadDest is where the current upload session writes: fw, or what tests wrap it in.
func (w *hdfsWriter) uploadDest(fw *hdfs.FileWriter) io.Writer {
	if w.s.wrapUpload != nil {
		return w.s.wrapUpload(w.sessions, fw)
	}
	return fw
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

// Waits of closeFile for the namenode's complete. Hadoop's client retries complete (as it
// retries addBlock) dfs.client.block.write.locateFollowingBlock.retries (5) times, waiting
// ...initial.delay.ms (400 ms) doubled each time: 12.4 s in all. tide allows the same total
// but starts at 10 ms: in a block upload every session ends with a complete, which usually
// waits only for the datanode's incremental block report, a few milliseconds.
const (
	completeFirstWait = 10 * time.Millisecond
	completeMaxWait   = time.Second
	completeBudget    = 12400 * time.Millisecond
)

// closeFile closes fw, repeating while the namenode answers that the last block is not yet
// minimally replicated (complete returned false). That answer comes after the namenode has
// committed the last block, so the repeated complete, which colinmarc/hdfs sends without the
// last block (its FileWriter forgets the block once it is finalized), needs none. Any other
// error is returned at once: closing again after a failed block finish would commit the block
// at the length written rather than the length acknowledged.
func closeFile(ctx context.Context, fw *hdfs.FileWriter) error {
	waited := time.Duration(0)
	for wait := completeFirstWait; ; wait = min(2*wait, completeMaxWait) {
		err := fw.Close()
		if err == nil {
			return nil
		}
		if !errors.Is(err, hdfs.ErrReplicating) || waited >= completeBudget {
			if waited > 0 {
				return fmt.Errorf("closing the temporary file (complete refused for %s): %w", waited.Round(time.Millisecond), err)
			}
			return fmt.Errorf("closing the temporary file: %w", err)
		}
		if err := sleepCtx(ctx, wait); err != nil {
			return err
		}
		waited += wait
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
