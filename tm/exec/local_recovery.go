package exec

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"

	"github.com/tidestream/tide/storage"
	"github.com/tidestream/tide/tm/localstate"
)

// Local recovery (state.backend.local-recovery). After uploading a checkpoint a subtask
// puts the same files into the TaskManager's local state store (tm/localstate) under
// (job, vertex, its key-group range, checkpoint); the store drops entries older than each
// checkpoint the AM confirms. A restore asks the store for every handle it needs (by
// name and size, whichever entry holds it: this subtask's, another's on this
// TaskManager, or a range the warm-up fetched) and downloads only the rest.

// localState is the store when local recovery is on (nil otherwise).
func (t *task) localState() *localstate.Store {
	if !t.e.cfg.StateBackend.LocalRecovery {
		return nil
	}
	return t.e.cfg.LocalState
}

// putLocal records checkpoint id's files of this subtask in the local store; a failure
// costs only the local copy.
func (t *task) putLocal(id int64, files []localstate.File) {
	ls := t.localState()
	if ls == nil || len(files) == 0 {
		return
	}
	k := localstate.Key{Job: t.e.cfg.JobID, Vertex: t.vertex.ID, KeyGroupStart: t.kgStart, KeyGroupEnd: t.kgEnd, Checkpoint: id}
	if err := ls.Put(k, files); err != nil {
		t.log.Warn("keeping the checkpoint's files locally failed; a restore here downloads them", "checkpoint", id, "err", err)
	}
}

// restoreFetch counts what a restore read locally and what it downloaded.
type restoreFetch struct {
	localFiles, downloadedFiles int
	localBytes, downloadedBytes int64
}

func (f restoreFetch) logArgs() []any {
	return []any{"local_files", f.localFiles, "local_bytes", f.localBytes, "downloaded_files", f.downloadedFiles, "downloaded_bytes", f.downloadedBytes}
}

// findLocal returns the local copy of handle (name as _metadata lists it, size) if the
// local store holds one.
func (t *task) findLocal(handle string, size int64) (string, bool) {
	ls := t.localState()
	if ls == nil {
		return "", false
	}
	return ls.Find(t.e.cfg.JobID, t.vertex.ID, handle, size)
}

// fetchFile makes the file a handle names available at a local path: the local store's
// copy, or a download from storage (name resolved in src) into dir.
func (t *task) fetchFile(ctx context.Context, st storage.Storage, name, handle string, size int64, dir string, fetch *restoreFetch) (string, error) {
	if p, ok := t.findLocal(handle, size); ok {
		fetch.localFiles++
		fetch.localBytes += size
		return p, nil
	}
	rc, err := st.Open(ctx, name)
	if err != nil {
		if errors.Is(err, storage.ErrNotFound) {
			return "", unrecoverable{fmt.Errorf("the checkpoint is damaged: %s is listed in _metadata but missing in %s: %w", name, st.URI(), err)}
		}
		return "", fmt.Errorf("opening %s in %s: %w", name, st.URI(), err)
	}
	defer rc.Close()
	f, err := os.CreateTemp(dir, "dl-*")
	if err != nil {
		return "", err
	}
	n, err := io.Copy(f, rc)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return "", fmt.Errorf("downloading %s from %s: %w", name, st.URI(), err)
	}
	if n != size {
		return "", unrecoverable{fmt.Errorf("the checkpoint is damaged: %s has %d bytes, _metadata records %d", name, n, size)}
	}
	fetch.downloadedFiles++
	fetch.downloadedBytes += n
	return filepath.Clean(f.Name()), nil
}

// countingReader counts the bytes read through it (not those a seek skips).
type countingReader struct {
	r io.Reader
	n int64
}

func (c *countingReader) Read(p []byte) (int, error) {
	n, err := c.r.Read(p)
	c.n += int64(n)
	return n, err
}

type countingReadSeeker struct {
	*countingReader
	s io.Seeker
}

func (c countingReadSeeker) Seek(off int64, whence int) (int64, error) { return c.s.Seek(off, whence) }

// reader keeps the underlying reader's Seek, so skipped blocks stay unread.
func (c *countingReader) reader() io.Reader {
	if s, ok := c.r.(io.Seeker); ok {
		return countingReadSeeker{c, s}
	}
	return c
}
