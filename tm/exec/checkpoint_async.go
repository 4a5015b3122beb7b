package exec

import (
	"context"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/tidestream/tide/state"
	"github.com/tidestream/tide/tm/localstate"
	"github.com/tidestream/tide/tm/snapshot"
)

// Asynchronous checkpoints. At the barrier a subtask takes only what must be consistent
// with it: the operators' state outside the keyed state backend (copied into a
// snapshot.Writer: source splits, sink commits, heap keyed state encoded as bytes, which
// is the heap backend's immutable view) and a view of the backend (a Pebble snapshot, or
// with incremental checkpoints a Pebble checkpoint of the database's files). Writing and
// uploading run on the subtask's uploader goroutine, which acknowledges the checkpoint to
// the AM once the bytes are durable, or declines it when the upload fails (the job goes
// on).
//
// Low priority: the uploader's OS thread runs at a higher nice value than the subtasks'
// (lowerUploadPriority, state.backend.upload.nice steps higher), so encoding and copying
// bytes yield the CPU to record processing.
//
// Bounded: one upload runs per subtask and one more may wait. A barrier that finds both
// taken (the AM gave up on a slow checkpoint and triggered the next one) blocks the
// subtask until the running upload ends: back-pressure rather than a growing queue of
// snapshots, each pinning a view of the backend.

// upload is the background part of one checkpoint of one subtask.
type upload struct {
	id     int64
	header snapshot.Header
	w      *snapshot.Writer
	view   state.View // the backend's entries (nil: none)
	// incr, when set, replaces view: the backend's files (incremental checkpoints).
	incr    *incrementalSnapshot
	started time.Time
	// sp, when set, makes this a savepoint: the view in full into its directory.
	sp *SavepointTarget
}

func (u *upload) release() {
	if u.view != nil {
		_ = u.view.Close()
		u.view = nil
	}
	if u.incr != nil {
		u.incr.release()
		u.incr = nil
	}
	u.w.Release()
}

// allowDeferred lets the operators' heap keyed state defer its encoding to the upload
// (copy-on-write views taken at the barrier), unless the configuration keeps the barrier
// synchronous (StateBackendConfig.SynchronousHeapSnapshots).
func (t *task) allowDeferred(w *snapshot.Writer) {
	if !t.e.cfg.StateBackend.SynchronousHeapSnapshots {
		w.AllowDeferred()
	}
}

// uploads is a subtask's uploader: a queue of one and the goroutine draining it.
type uploads struct {
	queue chan *upload
	done  chan struct{}
}

// prepareUpload takes the backend's view for checkpoint id (the synchronous part).
func (t *task) prepareUpload(id int64, w *snapshot.Writer) (*upload, error) {
	u := &upload{id: id, header: t.header(id), w: w, started: time.Now(), sp: t.a.savepoint(id)}
	if t.backend == nil {
		return u, nil
	}
	if t.incrementalEnabled() && u.sp == nil {
		inc, err := t.takeIncremental(id)
		if err != nil {
			w.Release()
			return nil, err
		}
		u.incr = inc
		return u, nil
	}
	v, err := t.backend.View()
	if err != nil {
		w.Release()
		return nil, fmt.Errorf("keyed state view: %w", err)
	}
	u.view = v
	return u, nil
}

// enqueueUpload hands u to the uploader, blocking while one upload runs and one waits.
func (t *task) enqueueUpload(ctx context.Context, u *upload) error {
	if t.uploads == nil {
		t.uploads = &uploads{queue: make(chan *upload, 1), done: make(chan struct{})}
		go t.runUploads(t.uploads)
	}
	select {
	case t.uploads.queue <- u:
		return nil
	default:
	}
	t.log.Info("checkpoint waits for the previous upload of this subtask (back-pressure)", "checkpoint", u.id)
	t.metrics.uploadWaits.Add(1)
	select {
	case t.uploads.queue <- u:
		return nil
	case <-ctx.Done():
		u.release()
		return ctx.Err()
	}
}

func (t *task) runUploads(q *uploads) {
	defer close(q.done)
	niced := false
	if inc := t.e.cfg.StateBackend.UploadNice; inc > 0 {
		if _, err := lowerUploadPriority(inc); err != nil {
			t.log.Warn("checkpoint uploads run at normal priority", "state.backend.upload.nice", inc, "err", err)
		} else {
			niced = true
		}
	}
	for u := range q.queue {
		release := func() {}
		if niced {
			release = reserveUploadProc() // checkpoint_async_procs.go
		}
		t.runUpload(u)
		release()
	}
}

// stopUploads lets queued uploads finish (they abort at once if the subtask was
// cancelled) and waits for them: the backend must outlive its views.
func (t *task) stopUploads() {
	if t.uploads == nil {
		return
	}
	close(t.uploads.queue)
	<-t.uploads.done
	t.uploads = nil
}

func (t *task) runUpload(u *upload) {
	defer u.release()
	ctx := t.ctx
	if ctx.Err() != nil {
		return
	}
	// The heap state's copy-on-write views are encoded here rather than at the barrier,
	// streamed into the state file by EncodeTo (snapshot/deferred_stream.go).
	var handles []StateHandle
	var err error
	if u.incr != nil {
		handles, err = t.uploadIncremental(ctx, u)
	} else {
		var h StateHandle
		h, err = t.uploadFull(ctx, u)
		handles = []StateHandle{h}
	}
	if ctx.Err() != nil {
		return // cancelled: the attempt's checkpoint is aborted anyway
	}
	if err != nil {
		_ = t.decline(u.id, fmt.Errorf("uploading the state: %w", err))
		return
	}
	var size int64
	for _, h := range handles {
		size += h.Size
	}
	t.metrics.stateSize.Store(size)
	t.metrics.asyncDuration.Store(int64(time.Since(u.started)))
	t.log.Debug("checkpoint state uploaded", "checkpoint", u.id, "files", len(handles), "bytes", size, "duration", time.Since(u.started))
	t.e.cfg.Reporter.CheckpointAck(t.a.id, u.id, t.vertex.ID, t.index, handles)
}

// uploadFull writes one self-contained state file: the writer's blocks, then the
// backend's entries in full from its view; into chk-<n>/ (teed to the local state store
// with local recovery) or, for a savepoint, into the savepoint's directory.
func (t *task) uploadFull(ctx context.Context, u *upload) (StateHandle, error) {
	var src snapshot.KeyedSource
	if u.view != nil {
		src = t.viewSource(u.view)
	}
	write := func(w io.Writer) (int64, error) { return u.w.EncodeTo(w, u.header, src) }
	if u.sp != nil {
		h, err := t.writeSavepointFile(ctx, *u.sp, write)
		if err != nil {
			return StateHandle{}, err
		}
		t.metrics.uploadedBytes.Store(h.Size)
		t.log.Info("savepoint state written", "checkpoint", u.id, "savepoint", u.sp.StorageURI+"/"+u.sp.Dir, "bytes", h.Size)
		return h, nil
	}
	name := CheckpointDir(t.e.cfg.JobID, u.id) + "/" + StateFileName(t.vertex.ID, t.index)
	dir := ""
	if t.localState() != nil {
		if d, lock, err := newScratchDir(t.scratchDir(), ""); err == nil {
			dir = d
			defer removeScratchDir(d, lock)
		}
	}
	h, local, err := t.writeTee(ctx, t.e.cfg.Storage, name, dir, write)
	if err != nil {
		return StateHandle{}, err
	}
	t.metrics.uploadedBytes.Store(h.Size)
	if local != "" {
		t.putLocal(u.id, []localstate.File{{Handle: h.Name, Size: h.Size, Path: local}})
	}
	return h, nil
}

// viewSource yields the view's entries of the subtask's key groups by operator and state
// (backend state names are "<operator id>/<state>", see stream.BackendStateName).
func (t *task) viewSource(v state.View) snapshot.KeyedSource {
	return func(fn func(op, st string, kg int, key, value []byte) error) error {
		return v.IterateRange(t.kgStart, t.kgEnd, func(kg int, bname string, key, value []byte) error {
			op, st, ok := t.splitBackendName(bname)
			if !ok {
				return fmt.Errorf("keyed state %q in the backend belongs to no operator of vertex %s", bname, t.vertex.ID)
			}
			return fn(op, st, kg, key, value)
		})
	}
}

func (t *task) splitBackendName(bname string) (op, st string, ok bool) {
	for _, c := range t.chain {
		if rest, found := strings.CutPrefix(bname, c.ID+"/"); found {
			return c.ID, rest, true
		}
	}
	return "", "", false
}
