package exec

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path"
	"strings"
	"time"

	"github.com/tidestream/tide/core/checkpoint"
	"github.com/tidestream/tide/storage"
	"github.com/tidestream/tide/stream"
	"github.com/tidestream/tide/tm/snapshot"
)

// CheckpointDir is where the files of checkpoint id of a job live in the storage.
func CheckpointDir(jobID string, id int64) string { return fmt.Sprintf("%s/chk-%d", jobID, id) }

// StateFileName is the name of one subtask's state file in its checkpoint directory.
func StateFileName(vertex string, index int) string {
	return fmt.Sprintf("%s-%d%s", vertex, index, stateFileSuffix)
}

// stateFileSuffix ends the name of every subtask state file (snapshot format).
const stateFileSuffix = ".state"

// checkpoint takes the synchronous part of checkpoint id at its barrier and hands the
// rest to the subtask's uploader (checkpoint_async.go): the operators write what they keep
// outside the keyed state backend, the backend gives a point-in-time view, the barrier goes
// downstream and the subtask goes on processing while the upload runs; the upload
// acknowledges once the bytes are durable. The first checkpoint after the end of input is
// the subtask's final checkpoint, taken and written synchronously; its state (and that of
// any later one) is what the subtask acknowledges once it finished.
func (t *task) checkpoint(ctx context.Context, id, ts int64) error {
	start := time.Now()
	defer func() { t.metrics.syncDuration.Store(int64(time.Since(start))) }()
	sp := t.a.savepoint(id) // a savepoint: written in full into its own directory
	w := &snapshot.Writer{}
	async := !t.ended
	if async && t.backend != nil {
		w.CoverBackend(t.backend)
	}
	if async {
		t.allowDeferred(w)
	}
	if t.reader != nil {
		splits, err := t.reader.SnapshotState(id)
		if err != nil {
			return t.decline(id, fmt.Errorf("source reader snapshot: %w", err))
		}
		sw := w.Operator(t.vertex.ID)
		for _, s := range splits {
			sw.List(splitsState, stream.RoundRobin, stream.ListItem(s))
		}
	}
	for _, op := range t.chain {
		if err := op.Operator.Snapshot(id, w.Operator(op.ID)); err != nil {
			w.Release() // the heap views operators before it deferred
			if errors.Is(err, stream.ErrFatal) {
				// Declining would go on without what the operator lost (a sink's file).
				return fmt.Errorf("operator %q snapshot of checkpoint %d: %w", op.Name, id, err)
			}
			return t.decline(id, fmt.Errorf("operator %q snapshot: %w", op.Name, err))
		}
	}
	if !async {
		t.final = w
		if t.finalCkpt == 0 {
			t.finalCkpt = id
			t.log.Info("taking the final checkpoint", "checkpoint", id)
		}
		data := w.Encode(t.header(id))
		if err := t.router.barrierOf(id, ts, sp); err != nil {
			return err
		}
		if !t.claim(id) {
			return nil
		}
		handle, err := t.writeState(ctx, id, data)
		if err != nil {
			return t.decline(id, err)
		}
		t.metrics.stateSize.Store(handle.Size)
		t.e.cfg.Reporter.CheckpointAck(t.a.id, id, t.vertex.ID, t.index, []StateHandle{handle})
		return nil
	}
	up, err := t.prepareUpload(id, w)
	if err != nil {
		return t.decline(id, err)
	}
	if err := t.router.barrierOf(id, ts, sp); err != nil {
		up.release()
		return err
	}
	if !t.claim(id) {
		up.release()
		return nil
	}
	return t.enqueueUpload(ctx, up)
}

func (t *task) header(id int64) snapshot.Header {
	return snapshot.Header{
		Vertex: t.vertex.ID, Subtask: t.index, Parallelism: t.parallelism, MaxParallelism: t.maxP,
		KeyGroupStart: t.kgStart, KeyGroupEnd: t.kgEnd, Checkpoint: id, Attempt: t.a.id, EndedInput: t.ended,
	}
}

func (t *task) writeState(ctx context.Context, id int64, data []byte) (StateHandle, error) {
	if sp := t.a.savepoint(id); sp != nil {
		return t.writeSavepointFile(ctx, *sp, func(w io.Writer) (int64, error) {
			n, err := w.Write(data)
			return int64(n), err
		})
	}
	name := CheckpointDir(t.e.cfg.JobID, id) + "/" + StateFileName(t.vertex.ID, t.index)
	if err := storage.WriteFile(ctx, t.e.cfg.Storage, name, data); err != nil {
		return StateHandle{}, fmt.Errorf("writing %s: %w", name, err)
	}
	return StateHandle{Name: name, Size: int64(len(data))}, nil
}

// ackFinal acknowledges checkpoint id for a subtask that has finished, with its final state
// marked as ended (so a restore from id neither reads its splits again nor repeats its
// end-of-input output). A subtask that finished without a final state (checkpointing
// disabled) acknowledges with none. Called only after the subtask's goroutine set t.final
// and closed its mailbox.
func (t *task) ackFinal(ctx context.Context, id int64) {
	if !t.isFinished() || !t.claim(id) {
		return
	}
	if t.final == nil {
		t.e.cfg.Reporter.CheckpointAck(t.a.id, id, t.vertex.ID, t.index, nil)
		return
	}
	h := t.header(id)
	h.EndedInput = true
	handle, err := t.writeState(ctx, id, t.final.Encode(h))
	if err != nil {
		_ = t.decline(id, fmt.Errorf("final state of a finished subtask: %w", err))
		return
	}
	t.e.cfg.Reporter.CheckpointAck(t.a.id, id, t.vertex.ID, t.index, []StateHandle{handle})
}

// snapshotRestoredFinal records the restored state of a subtask ended on restore as its
// final state: it takes no final checkpoint of its own but acknowledges later ones.
func (t *task) snapshotRestoredFinal() error {
	w := &snapshot.Writer{}
	for _, op := range t.chain {
		if err := op.Operator.Snapshot(t.plan.spec.RestoreFrom, w.Operator(op.ID)); err != nil {
			return fmt.Errorf("operator %q: snapshot of the restored final state: %w", op.Name, err)
		}
	}
	t.final = w
	return nil
}

// decline reports a checkpoint this subtask could not take; the subtask goes on.
func (t *task) decline(id int64, err error) error {
	t.log.Warn("declining checkpoint", "checkpoint", id, "err", err)
	t.e.cfg.Reporter.CheckpointDecline(t.a.id, id, t.vertex.ID, t.index, err.Error())
	return nil
}

// stateSource gives operators their restored state (nil operator readers on a fresh start).
type stateSource struct{ r *snapshot.Restore }

// ended reports whether every subtask of the vertex had ended its input in the checkpoint.
func (s stateSource) ended() bool { return s.r != nil && s.r.VertexEnded() }

func (s stateSource) operator(id string) stream.StateReader {
	if s.r == nil {
		return nil
	}
	return s.r.Operator(id)
}

// RestoreLocation is a complete checkpoint outside the job's own checkpoint storage: its
// _metadata is in Dir (relative to StorageURI's root), the files it lists where
// checkpoint.ListedName puts them (Dir is <job>/chk-<n> for a retained checkpoint in
// place, whose shared files are in <job>/shared/ of the same root).
type RestoreLocation struct {
	StorageURI string
	Dir        string
}

// restoreSource is where the checkpoint to restore lives: a storage and the directory
// holding its _metadata.
type restoreSource struct {
	st  storage.Storage
	dir string
	// own: the job's own checkpoint storage, whose tables its next incremental
	// checkpoints may list again; not a RestoreLocation (another job's checkpoint or a
	// savepoint), whose files the job never references.
	own bool
}

// metadataPath is the _metadata file of the checkpoint.
func (s restoreSource) metadataPath() string { return path.Join(s.dir, checkpoint.MetadataFile) }

// resolve maps a file name the _metadata lists to its name in the storage
// (checkpoint.ListedName: the AM's rule too): in place (dir is <job>/chk-<n> of the
// storage: the job's own checkpoint, or a retained one the AM handed over rooted so) the
// shared files are the job's <job>/shared/; in a savepoint copy they are in <dir>/shared/.
func (s restoreSource) resolve(meta checkpoint.Metadata, name string) string {
	return checkpoint.ListedName(meta, s.dir, name)
}

// openRestoreSource returns where checkpoint n is: the job's own storage, or the
// deployment's RestoreLocation opened for this restore (close releases it).
func (t *task) openRestoreSource(ctx context.Context, n int64) (restoreSource, func(), error) {
	loc := t.plan.spec.RestoreLocation
	if loc == nil {
		return restoreSource{st: t.e.cfg.Storage, dir: CheckpointDir(t.e.cfg.JobID, n), own: true}, func() {}, nil
	}
	st, err := storage.Open(ctx, loc.StorageURI, storage.Options{Logger: t.log})
	if err != nil {
		return restoreSource{}, nil, fmt.Errorf("restoring checkpoint %d from %s/%s: open its storage: %w", n, loc.StorageURI, loc.Dir, err)
	}
	closeFn := func() {
		if err := st.Close(); err != nil {
			t.log.Warn("closing the restore storage", "storage", loc.StorageURI, "err", err)
		}
	}
	return restoreSource{st: st, dir: loc.Dir}, closeFn, nil
}

// loadRestore reads the files of this vertex in the checkpoint to restore from. The
// checkpoint's _metadata (written last by the AM) lists every subtask's files with their
// sizes; a listed file that is missing or has another size makes the checkpoint damaged
// and the restore fails with the file's name, instead of silently restoring less state.
// The checkpoint is one of the job's own, or a savepoint in the deployment's
// RestoreLocation.
func (t *task) loadRestore(ctx context.Context) (stateSource, error) {
	n := t.plan.spec.RestoreFrom
	if n <= 0 {
		return stateSource{}, nil
	}
	start := time.Now()
	src, closeSrc, err := t.openRestoreSource(ctx, n)
	if err != nil {
		return stateSource{}, err
	}
	defer closeSrc()
	meta, err := t.readMetadata(ctx, src, n)
	if err != nil {
		return stateSource{}, err
	}
	r := snapshot.NewRestore(t.index, t.parallelism, t.kgStart, t.kgEnd)
	loaded := 0
	var fetch restoreFetch
	var dbs []dbManifest
	for _, st := range meta.Subtasks {
		if st.Subtask.Vertex != t.vertex.ID {
			continue
		}
		// Database files (incremental checkpoints) are listed by the subtask's manifest,
		// read only when its writer's key groups (in its name; not derivable from the
		// writer's index, since sticky placement deploys other ranges than the equal
		// split) overlap this subtask's. restoreDB keeps the overlapping ones.
		for _, h := range st.Handles {
			if !strings.HasSuffix(h.Name, dbManifestSuffix) {
				continue
			}
			if from, to, ok := manifestKeyGroups(h.Name); ok && (from > t.kgEnd || to < t.kgStart) {
				continue
			}
			man, err := t.readManifest(ctx, src, meta, h, &fetch)
			if err != nil {
				return stateSource{}, err
			}
			dbs = append(dbs, man)
		}
		for _, h := range st.Handles {
			if !strings.HasSuffix(h.Name, stateFileSuffix) {
				continue // a database file
			}
			f, err := t.readListedFile(ctx, src, meta, h, r, &fetch)
			if err != nil {
				return stateSource{}, err
			}
			if f.Header.Vertex != t.vertex.ID {
				return stateSource{}, unrecoverable{fmt.Errorf("restoring checkpoint %d: %s holds vertex %q, want %q", n, h.Name, f.Header.Vertex, t.vertex.ID)}
			}
			if f.Header.MaxParallelism != t.maxP {
				return stateSource{}, unrecoverable{fmt.Errorf("restoring checkpoint %d: %s was written with maxParallelism %d, the job now has %d; key groups cannot be remapped",
					n, h.Name, f.Header.MaxParallelism, t.maxP)}
			}
			if err := r.Add(f); err != nil {
				return stateSource{}, unrecoverable{fmt.Errorf("restoring checkpoint %d from %s: %w", n, h.Name, err)}
			}
			loaded++
		}
	}
	if len(dbs) > 0 {
		if err := t.restoreDB(ctx, src, meta, dbs, &fetch); err != nil {
			return stateSource{}, err
		}
	}
	t.metrics.restoreLocal.Store(fetch.localBytes)
	t.metrics.restoreDownloaded.Store(fetch.downloadedBytes)
	t.log.Info("restoring state", append([]any{"checkpoint", n, "from", src.st.URI() + "/" + src.dir, "files", loaded,
		"databases", len(dbs), "key_groups", fmt.Sprintf("%d-%d", t.kgStart, t.kgEnd), "vertex_ended", r.VertexEnded(),
		"restore_ms", time.Since(start).Milliseconds()},
		fetch.logArgs()...)...)
	return stateSource{r: r}, nil
}

// readMetadata reads the _metadata of checkpoint n; without it the checkpoint is not complete.
func (t *task) readMetadata(ctx context.Context, src restoreSource, n int64) (checkpoint.Metadata, error) {
	name := src.metadataPath()
	data, err := storage.ReadFile(ctx, src.st, name)
	if err != nil {
		if errors.Is(err, storage.ErrNotFound) {
			return checkpoint.Metadata{}, unrecoverable{fmt.Errorf("restoring checkpoint %d: %s in %s does not exist (the checkpoint is not complete): %w", n, name, src.st.URI(), err)}
		}
		return checkpoint.Metadata{}, fmt.Errorf("restoring checkpoint %d: reading %s in %s: %w", n, name, src.st.URI(), err)
	}
	meta, err := checkpoint.DecodeMetadata(data)
	if err != nil {
		return checkpoint.Metadata{}, unrecoverable{fmt.Errorf("restoring checkpoint %d: %s in %s: %w", n, name, src.st.URI(), err)}
	}
	if meta.CheckpointID != n {
		return checkpoint.Metadata{}, unrecoverable{fmt.Errorf("restoring checkpoint %d: %s in %s describes checkpoint %d", n, name, src.st.URI(), meta.CheckpointID)}
	}
	return meta, nil
}

// readListedFile opens one file the _metadata lists, after checking it is there with the
// recorded size.
func (t *task) readListedFile(ctx context.Context, src restoreSource, meta checkpoint.Metadata, h checkpoint.StateHandle, r *snapshot.Restore, fetch *restoreFetch) (*snapshot.File, error) {
	n := meta.CheckpointID
	if p, ok := t.findLocal(h.Name, h.Size); ok {
		fetch.localFiles++
		fetch.localBytes += h.Size
		f, err := os.Open(p)
		if err == nil {
			defer f.Close()
			sf, err := snapshot.Read(f, r.Wants)
			if err == nil {
				return sf, nil
			}
			t.log.Warn("local copy of a state file unreadable; downloading it", "file", h.Name, "err", err)
		}
	}
	name := src.resolve(meta, h.Name)
	fi, err := src.st.Stat(ctx, name)
	if err != nil {
		if errors.Is(err, storage.ErrNotFound) {
			return nil, unrecoverable{fmt.Errorf("restoring checkpoint %d: the checkpoint is damaged: %s is listed in _metadata but missing: %w", n, name, err)}
		}
		return nil, fmt.Errorf("restoring checkpoint %d: %w", n, err)
	}
	if fi.Size != h.Size {
		return nil, unrecoverable{fmt.Errorf("restoring checkpoint %d: the checkpoint is damaged: %s has %d bytes, _metadata records %d", n, name, fi.Size, h.Size)}
	}
	fetch.downloadedFiles++
	return t.readStateFile(ctx, src.st, name, r, fetch)
}

func (t *task) readStateFile(ctx context.Context, st storage.Storage, name string, r *snapshot.Restore, fetch *restoreFetch) (*snapshot.File, error) {
	rc, err := st.Open(ctx, name)
	if err != nil {
		return nil, fmt.Errorf("restoring: opening %s in %s: %w", name, st.URI(), err)
	}
	defer rc.Close()
	cr := &countingReader{r: rc}
	f, err := snapshot.Read(cr.reader(), r.Wants)
	fetch.downloadedBytes += cr.n
	if err != nil {
		return nil, unrecoverable{fmt.Errorf("restoring: reading %s in %s: %w", name, st.URI(), err)}
	}
	return f, nil
}
