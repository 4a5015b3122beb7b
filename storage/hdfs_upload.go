package storage

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"path"
	"time"

	"github.com/colinmarc/hdfs/v2"
)

// Upload sessions. Each session is an open (create, then append), the session's bytes, and a
// close that waits for the namenode's complete; so when a session starts, every block before
// it is COMPLETE. The namenode refuses a new block with NotReplicatedYetException only while
// the block before the one the client just finished is not yet complete
// (FSDirWriteFileOp.validateAddBlock checks the penultimate block). In a session of
// sessionBlocks (two) blocks, the only block allocated after the first is checked against the
// last block of the previous session, complete by then: the refusal that Hadoop's client meets
// with dfs.client.block.write.locateFollowingBlock.retries cannot happen, and the wait it
// stands for happens in the session's complete instead (closeFile, with Hadoop's budget).
//
// A session costs a few namenode calls (getFileInfo, append, complete), which on a cluster of
// small blocks (the test mini-cluster's are 1 MiB) adds up; so a session spans at least
// minSessionBytes. Within such a session the namenode can refuse a block (its datanodes'
// block reports lagging); the session is then resumed like any failed one, and the rest of
// the upload goes in sessions of sessionBlocks blocks, which cannot meet the refusal again.
const (
	sessionBlocks   = 2
	minSessionBytes = 32 << 20
)

// notReplicatedYet is the namenode's refusal of a block while an earlier one is incomplete.
const notReplicatedYet = "org.apache.hadoop.hdfs.server.namenode.NotReplicatedYetException"

// blockUpload uploads a writer's bytes to its temporary file in sessions of sessionBlocks
// blocks, each ending at a block boundary. When a session fails (a datanode drops the
// pipeline, the namenode refuses something, a connection breaks), the session is abandoned,
// the namenode is asked to recover the file's lease (which closes it at the length the
// datanodes hold), and the next session appends from that length: only what the failed
// session had not got acknowledged is sent again. colinmarc/hdfs's FileWriter cannot resume
// after a failure, and a new FileWriter cannot open a file another writer left open; the
// lease recovery is what makes the resume possible.
type blockUpload struct {
	w          *hdfsWriter
	blockSize  int64
	perSession int64 // bytes per session, rounded to whole blocks
	size       int64
	tmpPath    string // absolute HDFS path of the temporary file

	uc     *uploadClient // the current sessions' client; nil after a failure
	acked  int64         // bytes the temporary file holds, closed on the namenode
	at     int64         // bytes handed to HDFS when the latest session failed
	exists bool          // the temporary file exists
	dirty  bool          // a session failed: the file may be open and hold more than acked
}

// uploadBlocks runs the sessions until the temporary file holds every byte, closed, then
// renames it into place. Transient failures are retried with the storage's backoff; the
// attempts count again from 1 whenever the file has grown since the previous failure, so a
// long upload with scattered failures goes on while one that makes no progress ends.
func (w *hdfsWriter) uploadBlocks(ctx context.Context, blockSize int64) error {
	w.tmp = tempName(w.name)
	u := &blockUpload{w: w, blockSize: blockSize, size: w.data.Size(), tmpPath: w.s.hdfsPath(w.tmp)}
	switch n := w.s.sessionBytes; {
	case n < 0:
		u.perSession = u.size
	case n > 0:
		u.perSession = max((n+blockSize-1)/blockSize, 1) * blockSize
	default:
		u.perSession = max(sessionBlocks, (minSessionBytes+blockSize-1)/blockSize) * blockSize
	}
	if w.data.Spilled() && w.copyBuf == nil {
		w.copyBuf = make([]byte, spillChunk)
	}
	defer func() {
		if u.uc != nil {
			u.uc.close()
		}
	}()
	policy := w.s.opts.Retry
	failures, failedAt := 0, int64(-1)
	for {
		err := u.step(ctx)
		if err == nil {
			if u.exists && !u.dirty && u.acked == u.size {
				return w.s.call(ctx, "commit", w.name, func(c *hdfs.Client) error { return w.s.renameOver(c, w.tmp, w.name) })
			}
			continue
		}
		if ctx.Err() != nil {
			return &Error{Op: "commit", Path: w.uri(), Attempts: failures + 1, Err: errors.Join(context.Cause(ctx), u.describe(err))}
		}
		c := w.s.classify(err)
		if u.acked > failedAt {
			failures, failedAt = 0, u.acked
		}
		failures++
		if !c.transient {
			return &Error{Op: "commit", Path: w.uri(), Kind: c.kind, Dir: c.dir, Attempts: failures, Err: u.describe(err)}
		}
		if failures >= policy.Attempts {
			w.s.r.log.Error("storage: giving up on an upload after transient errors", "path", w.uri(),
				"block", u.block(), "attempts", failures, "err", err)
			return &Error{Op: "commit", Path: w.uri(), Kind: ErrUnavailable, Attempts: failures, Err: u.describe(err)}
		}
		wait := jitter(policy.backoff(failures))
		w.s.r.log.Warn("storage: upload session failed, resuming from the acknowledged bytes", "path", w.uri(),
			"block", u.block(), "acknowledged", u.acked, "bytes", u.size, "attempt", failures,
			"max_attempts", policy.Attempts, "backoff", wait, "err", err)
		if c.reconnect {
			w.s.dropClient()
		}
		var remote hdfs.Error
		if errors.As(err, &remote) && remote.Exception() == notReplicatedYet && u.perSession > sessionBlocks*blockSize {
			u.perSession = sessionBlocks * blockSize
			w.s.r.log.Info("storage: the namenode refused a block as not replicated yet; the rest of the upload goes in sessions of two blocks",
				"path", w.uri(), "block_size", blockSize)
		}
		if serr := sleepCtx(ctx, wait); serr != nil {
			return &Error{Op: "commit", Path: w.uri(), Attempts: failures, Err: errors.Join(serr, u.describe(err))}
		}
	}
}

// block names the block the upload is at (where the latest session failed, if after the
// acknowledged bytes), 1-based, with its byte range.
func (u *blockUpload) block() string {
	n := max((u.size+u.blockSize-1)/u.blockSize, 1)
	pos := max(u.acked, u.at)
	k := pos / u.blockSize
	if pos == u.size && k > 0 && pos%u.blockSize == 0 {
		k-- // every byte is in: the last block
	}
	return fmt.Sprintf("block %d of %d (bytes %d-%d)", k+1, n, k*u.blockSize, min((k+1)*u.blockSize, u.size))
}

// describe wraps a session's error with where the upload was.
func (u *blockUpload) describe(err error) error {
	return fmt.Errorf("uploading %s of %s (%d of %d bytes acknowledged): %w",
		u.block(), u.w.s.uriOf(u.w.tmp), u.acked, u.size, err)
}

// step recovers the file after a failed session, or runs the next session.
func (u *blockUpload) step(ctx context.Context) error {
	if u.dirty {
		return u.recover(ctx)
	}
	if u.exists && u.acked == u.size {
		return nil
	}
	return u.session(ctx)
}

// session writes the bytes from acked to the end of the session's last block (or of the
// file) and closes the file.
func (u *blockUpload) session(ctx context.Context) error {
	w := u.w
	if u.uc == nil {
		uc, err := w.s.newUploadClient()
		if err != nil {
			return err
		}
		u.uc = uc
	}
	var fw *hdfs.FileWriter
	var err error
	u.dirty = true // from here until the close, a failure may leave the file open
	if !u.exists {
		if err = u.uc.MkdirAll(path.Dir(u.tmpPath), 0o755); err == nil {
			fw, err = u.uc.Create(u.tmpPath)
		}
	} else {
		fw, err = u.uc.Append(u.tmpPath)
	}
	if err != nil {
		u.at = u.acked
		u.abandon(nil)
		return err
	}
	u.exists = true
	if dl, ok := w.deadline(ctx); ok {
		_ = fw.SetDeadline(dl) // only fails for a broken block writer, which Write reports
	}
	end := min(u.size, (u.acked/u.blockSize)*u.blockSize+u.perSession)
	if end <= u.acked {
		end = u.size
	}
	w.sessions++
	dst := w.uploadDest(fw)
	n, err := w.data.WriteRange(dst, w.copyBuf, u.acked, end)
	u.at = u.acked + n
	if err != nil {
		u.abandon(fw)
		return err
	}
	if err := closeFile(ctx, fw); err != nil {
		u.abandon(fw)
		return err
	}
	u.acked, u.dirty = end, false
	return nil
}

// abandon gives up the current session's client (and with it the session's connections).
func (u *blockUpload) abandon(fw *hdfs.FileWriter) {
	if u.uc != nil {
		u.uc.abandon(fw)
		u.uc = nil
	}
}

// recover finds out what the temporary file holds after a failed session: it has the namenode
// close the file (lease recovery) and takes its length as the acknowledged bytes.
func (u *blockUpload) recover(ctx context.Context) error {
	c, err := u.w.s.getClient()
	if err != nil {
		return err
	}
	if _, err := c.Stat(u.tmpPath); errors.Is(err, fs.ErrNotExist) {
		u.exists, u.acked, u.dirty = false, 0, false // the create never happened
		return nil
	} else if err != nil {
		return describeRemote(err)
	}
	start := time.Now()
	if err := u.w.s.recoverLease(ctx, u.tmpPath); err != nil {
		return fmt.Errorf("recovering the lease of %s: %w", u.w.s.uriOf(u.w.tmp), err)
	}
	fi, err := c.Stat(u.tmpPath)
	if err != nil {
		return describeRemote(err)
	}
	if fi.Size() > u.size {
		return fmt.Errorf("%s holds %d bytes after its lease recovery, more than the %d written", u.w.s.uriOf(u.w.tmp), fi.Size(), u.size)
	}
	u.w.s.r.log.Info("storage: resuming an upload after recovering its file", "path", u.w.uri(),
		"acknowledged_before", u.acked, "acknowledged", fi.Size(), "bytes", u.size, "recovery_took", time.Since(start))
	u.exists, u.acked, u.at, u.dirty = true, fi.Size(), 0, false
	return nil
}
