package am

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"path"
	"strings"
	"time"

	"github.com/tidestream/tide/api"
	"github.com/tidestream/tide/core"
	"github.com/tidestream/tide/core/checkpoint"
	"github.com/tidestream/tide/storage"
)

// savepointsDirKey is the configuration key of the default savepoint directory.
const savepointsDirKey = "state.savepoints.dir"

// savepointCopyTimeout bounds copying one checkpoint into a savepoint directory.
const savepointCopyTimeout = 10 * time.Minute

// TriggerSavepoint starts a savepoint (POST /jobs/:jobid/savepoints, and /stop with
// stop) into its own directory under target (or state.savepoints.dir): in CANONICAL
// format (the default) a savepoint checkpoint the subtasks write there in full
// (checkpoint_savepoint_trigger.go); in NATIVE format a checkpoint taken now and copied
// there, _metadata last. With stop the job is cancelled once the savepoint is complete.
func (a *AM) TriggerSavepoint(ctx context.Context, target, format, triggerID string, stop bool, remote string) (string, error) {
	kind := opSavepoint
	if stop {
		kind = opStop
	}
	return a.startSavepoint(ctx, kind, target, format, triggerID, remote)
}

func (a *AM) startSavepoint(ctx context.Context, kind operationKind, target, format, triggerID, remote string) (string, error) {
	var problems []string
	ft, err := checkpoint.ParseFormatType(format)
	if err != nil {
		problems = append(problems, err.Error())
	}
	targetURI, err := a.SavepointTarget(target)
	if err != nil {
		problems = append(problems, err.Error())
	}
	if len(problems) > 0 {
		return "", statusError(http.StatusBadRequest, problems...)
	}
	if ft == checkpoint.FormatCanonical {
		return a.startCanonicalSavepoint(ctx, kind, targetURI, triggerID, remote)
	}
	// NATIVE: a checkpoint in the backend's own format, copied (see startSavepointCopy).
	return a.startOperation(ctx, operation{ID: triggerID, Kind: kind, TargetDir: targetURI}, remote)
}

// SavepointOperation polls a savepoint or a stop (GET /jobs/:jobid/savepoints/:triggerid,
// where Flink polls both).
func (a *AM) SavepointOperation(triggerID string) (api.AsyncOperation, error) {
	a.resolveOperations()
	op, ok := a.api.triggers.poll(triggerID, opSavepoint, opStop)
	if !ok {
		return api.AsyncOperation{}, statusErrorf(http.StatusNotFound, "Savepoint trigger %s not found for job %s: expected the request-id of POST /jobs/%s/savepoints or /stop", triggerID, a.cfg.JobID, a.cfg.JobID)
	}
	return operationJSON(op, api.OperationResult{}), nil
}

// startSavepointCopy copies the completed checkpoint of op into its savepoint directory
// in the background; a stop then cancels the job.
// The checkpoint is pinned while it is copied, so that retention
// (state.checkpoints.num-retained) cannot delete it halfway; a delete put off meanwhile
// happens once the copy ends.
func (a *AM) startSavepointCopy(op operation, e checkpoint.HistoryEntry) {
	a.ckpt.pins.pin(e.ID)
	ctx, cancel := context.WithTimeout(context.Background(), savepointCopyTimeout)
	go func() {
		select {
		case <-ctx.Done():
		case <-a.loopDone:
			cancel()
		}
	}()
	go func() {
		defer cancel()
		run := &savepointRun{opID: op.ID, stop: op.Kind == opStop, format: checkpoint.FormatNative,
			targetURI: op.TargetDir, dir: savepointDirName(a.cfg.JobID), id: e.ID}
		location, err := a.copyRecordedSavepoint(ctx, run)
		if a.ckpt.pins.unpin(e.ID) {
			// If the loop has ended, the next AM's recovery trims what is beyond num-retained.
			a.post(func() { a.ckpt.discard(e.ID) })
		}
		if err != nil {
			a.log.Warn("savepoint failed", "trigger", op.ID, "checkpoint", e.ID, "target", op.TargetDir, "err", err)
			a.api.triggers.finish(op.ID, "", err.Error())
			return
		}
		a.log.Info("savepoint completed", "trigger", op.ID, "checkpoint", e.ID, "location", location)
		if op.Kind == opStop {
			if !a.post(func() { a.step(core.CancelJob{}) }) {
				a.api.triggers.finish(op.ID, "", fmt.Sprintf("savepoint written to %s, but the job had already ended", location))
				return
			}
			a.log.Info("stopping the job after its savepoint", "trigger", op.ID, "location", location)
		}
		a.api.triggers.finish(op.ID, location, "")
	}()
}

// copyRecordedSavepoint copies checkpoint run.id into the savepoint directory run.dir
// under run.targetURI and returns its URI. Like a canonical savepoint's, the directory is
// recorded durably in the AM state first (checkpoint_savepoint_lost.go), so that the next
// AM deletes what a copy left half done when this AM dies; a copy that fails deletes its
// directory itself. The record goes once the directory is complete or gone.
func (a *AM) copyRecordedSavepoint(ctx context.Context, run *savepointRun) (string, error) {
	where := strings.TrimSuffix(run.targetURI, "/") + "/" + run.dir
	var version uint64
	if err := a.mutate(ctx, func() { version = a.ckpt.recordSavepointDir(run) }); err != nil {
		return "", fmt.Errorf("savepoint not taken: its directory %s could not be recorded in the AM state first: %w", where, err)
	}
	forget := func() { a.post(func() { a.ckpt.forgetSavepointDir(run) }) }
	if err := a.waitStateDurable(ctx, version); err != nil {
		forget() // nothing was written into it
		return "", fmt.Errorf("savepoint not taken: its directory %s could not be recorded in the AM state first: %w", where, err)
	}
	location, err := a.copySavepoint(ctx, run.targetURI, run.dir, run.id)
	if err == nil {
		forget()
		return location, nil
	}
	// The copy's partial directory: deleted now (kept in the record when that fails, for
	// the next AM).
	dctx, dcancel := context.WithTimeout(context.WithoutCancel(ctx), lostSavepointTimeout)
	defer dcancel()
	if _, derr := deleteUnlessComplete(dctx, persistedSavepoint{StorageURI: run.targetURI, Dir: run.dir}); derr != nil {
		return "", fmt.Errorf("%w (its partial directory %s could not be deleted: %v)", err, where, derr)
	}
	forget()
	return "", fmt.Errorf("%w (its partial directory %s was deleted)", err, where)
}

// copySavepoint copies checkpoint id into the new directory name under target and
// returns its URI. _metadata is copied last: a savepoint directory counts only with it in
// place.
func (a *AM) copySavepoint(ctx context.Context, target, name string, id int64) (string, error) {
	src := a.cfg.Storage
	if src == nil {
		return "", errors.New("checkpointing is off")
	}
	dst, err := storage.Open(ctx, target, storage.Options{})
	if err != nil {
		return "", fmt.Errorf("open savepoint directory %s: %w", target, err)
	}
	defer dst.Close()
	from := checkpoint.ChkDir(a.cfg.JobID, id)
	// A savepoint must be restorable: refuse to copy a checkpoint whose _metadata lists
	// a file that is not there with its recorded size.
	store := &checkpointStore{st: src, jobID: a.cfg.JobID}
	md, err := store.validate(ctx, id)
	if err != nil {
		return "", fmt.Errorf("checkpoint %d cannot become a savepoint: %w", id, err)
	}
	files, err := listTree(ctx, src, from)
	if err != nil {
		return "", fmt.Errorf("list checkpoint %d in %s (it may have been discarded under state.checkpoints.num-retained): %w", id, src.URI(), err)
	}
	var metadata []string
	copied := 0
	for _, f := range files {
		if path.Base(f) == checkpoint.MetadataFile {
			metadata = append(metadata, f)
			continue
		}
		if err := copyFile(ctx, src, path.Join(from, f), dst, path.Join(name, f)); err != nil {
			return "", err
		}
		copied++
		a.ckpt.crashIfSavepointCopied(id, copied)
	}
	if len(metadata) == 0 {
		return "", fmt.Errorf("checkpoint %d in %s has no %s", id, src.URI(), checkpoint.MetadataFile)
	}
	// An incremental checkpoint's shared files go into the savepoint too (under
	// shared/), so it stands alone once the job's checkpoints are gone.
	for _, n := range sharedNames(a.cfg.JobID, md.Subtasks) {
		rest := strings.TrimPrefix(n, sharedDir(a.cfg.JobID)+"/")
		if err := copyFile(ctx, src, n, dst, path.Join(name, "shared", rest)); err != nil {
			return "", err
		}
	}
	// The copy's _metadata says what it is: a savepoint in NATIVE format.
	md.CheckpointType, md.FormatType = checkpoint.TypeSavepoint, checkpoint.FormatNative
	data, err := checkpoint.EncodeMetadata(md)
	if err != nil {
		return "", fmt.Errorf("savepoint of checkpoint %d: %w", id, err)
	}
	for _, f := range metadata {
		if err := storage.WriteFile(ctx, dst, path.Join(name, f), data); err != nil {
			return "", fmt.Errorf("savepoint of checkpoint %d: %w", id, err)
		}
	}
	return strings.TrimSuffix(dst.URI(), "/") + "/" + name, nil
}

// listTree lists the files under dir, relative to it.
func listTree(ctx context.Context, st storage.Storage, dir string) ([]string, error) {
	entries, err := st.List(ctx, dir)
	if err != nil {
		return nil, err
	}
	var out []string
	for _, e := range entries {
		if !e.IsDir {
			out = append(out, e.Name)
			continue
		}
		sub, err := listTree(ctx, st, path.Join(dir, e.Name))
		if err != nil {
			return nil, err
		}
		for _, s := range sub {
			out = append(out, path.Join(e.Name, s))
		}
	}
	return out, nil
}

func copyFile(ctx context.Context, src storage.Storage, from string, dst storage.Storage, to string) error {
	in, err := src.Open(ctx, from)
	if err != nil {
		return fmt.Errorf("open %s in %s: %w", from, src.URI(), err)
	}
	defer in.Close()
	out, err := dst.Create(ctx, to)
	if err != nil {
		return fmt.Errorf("create %s in %s: %w", to, dst.URI(), err)
	}
	if _, err := io.Copy(out, in); err != nil {
		_ = out.Abort(ctx)
		return fmt.Errorf("copy %s to %s/%s: %w", from, dst.URI(), to, err)
	}
	if err := out.Commit(ctx); err != nil {
		return fmt.Errorf("commit %s/%s: %w", dst.URI(), to, err)
	}
	return nil
}
