package am

import (
	"context"
	"errors"
	"fmt"
	"io"
	"path"
	"slices"
	"strings"

	"github.com/tidestream/tide/core/checkpoint"
	"github.com/tidestream/tide/storage"
)

// maxMetadataSize bounds how much of a _metadata file is read: far above any real one,
// low enough that a corrupt file cannot exhaust the AM's memory.
const maxMetadataSize = 64 << 20

// errDamagedCheckpoint is wrapped by every error saying that a checkpoint which has its
// _metadata cannot be restored: a listed file is missing or has another size, or the
// _metadata itself does not decode. Other errors (storage unreachable) say nothing about
// the checkpoint.
var errDamagedCheckpoint = errors.New("checkpoint is damaged")

// handlePath resolves a file listed in the _metadata of checkpoint id to its name under
// the storage root. Subtasks list root-relative names (<job>/chk-<n>/<file>); the AM's
// own files are listed relative to the checkpoint directory.
func (s *checkpointStore) handlePath(id int64, name string) string {
	if isShared(s.jobID, name) {
		return name // <job>/shared/…, beside the chk-<n> directories
	}
	dir := checkpoint.ChkDir(s.jobID, id)
	if strings.HasPrefix(name, dir+"/") {
		return name
	}
	return path.Join(dir, name)
}

// readMetadata reads and decodes the _metadata of checkpoint id.
func (s *checkpointStore) readMetadata(ctx context.Context, id int64) (checkpoint.Metadata, error) {
	name := checkpoint.MetadataPath(s.jobID, id)
	md, err := readMetadataFile(ctx, s.st, name)
	if err != nil {
		return md, err
	}
	if md.JobID != s.jobID || md.CheckpointID != id {
		return checkpoint.Metadata{}, fmt.Errorf("%w: %s describes job %s checkpoint %d, want job %s checkpoint %d",
			errDamagedCheckpoint, name, md.JobID, md.CheckpointID, s.jobID, id)
	}
	return md, nil
}

// readMetadataFile reads and decodes the _metadata file name in st. A missing file or
// one that does not decode wraps errDamagedCheckpoint.
func readMetadataFile(ctx context.Context, st storage.Storage, name string) (checkpoint.Metadata, error) {
	r, err := st.Open(ctx, name)
	if err != nil {
		if errors.Is(err, storage.ErrNotFound) {
			return checkpoint.Metadata{}, fmt.Errorf("%w: %s vanished: %w", errDamagedCheckpoint, name, err)
		}
		return checkpoint.Metadata{}, fmt.Errorf("open %s: %w", name, err)
	}
	defer r.Close()
	data, err := io.ReadAll(io.LimitReader(r, maxMetadataSize+1))
	if err != nil {
		return checkpoint.Metadata{}, fmt.Errorf("read %s: %w", name, err)
	}
	if len(data) > maxMetadataSize {
		return checkpoint.Metadata{}, fmt.Errorf("%w: %s is larger than %d bytes", errDamagedCheckpoint, name, maxMetadataSize)
	}
	md, err := checkpoint.DecodeMetadata(data)
	if err != nil {
		return checkpoint.Metadata{}, fmt.Errorf("%w: %s: %w", errDamagedCheckpoint, name, err)
	}
	return md, nil
}

// validate checks that every file the _metadata of checkpoint id lists exists with the
// recorded size. Damage is reported wrapping errDamagedCheckpoint, listing every
// damaged file; storage failures are returned as they are.
func (s *checkpointStore) validate(ctx context.Context, id int64) (checkpoint.Metadata, error) {
	md, err := s.readMetadata(ctx, id)
	if err != nil {
		return md, err
	}
	err = validateListed(ctx, s.st, md, func(name string) string { return s.handlePath(id, name) })
	if err != nil {
		return md, fmt.Errorf("checkpoint %d of job %s: %w", id, s.jobID, err)
	}
	return md, nil
}

// validateListed checks that every file md lists (resolve maps a listed name to its
// name in st) exists in st with the recorded size. Damage wraps errDamagedCheckpoint and
// names every damaged file; storage failures are returned as they are.
func validateListed(ctx context.Context, st storage.Storage, md checkpoint.Metadata, resolve func(string) string) error {
	var handles []checkpoint.StateHandle
	for _, sub := range md.Subtasks {
		handles = append(handles, sub.Handles...)
	}
	handles = append(handles, md.MasterStates...)
	var damage []string
	for _, h := range handles {
		name := resolve(h.Name)
		fi, err := st.Stat(ctx, name)
		switch {
		case errors.Is(err, storage.ErrNotFound):
			damage = append(damage, fmt.Sprintf("%s is missing", name))
		case err != nil:
			return fmt.Errorf("validate %s in %s: %w", name, st.URI(), err)
		case fi.IsDir:
			damage = append(damage, fmt.Sprintf("%s is a directory, want a file of %d bytes", name, h.Size))
		case fi.Size != h.Size:
			damage = append(damage, fmt.Sprintf("%s has %d bytes, _metadata recorded %d", name, fi.Size, h.Size))
		}
	}
	if len(damage) > 0 {
		return fmt.Errorf("%w: in %s: %s", errDamagedCheckpoint, st.URI(), strings.Join(damage, "; "))
	}
	return nil
}

// restorePoint is what recovery found: the newest intact checkpoint and the complete
// checkpoints to adopt (the damaged ones newer than it are left out).
type restorePoint struct {
	latest  int64
	adopt   []int64
	damaged map[int64]error
}

// newestIntact validates complete checkpoints newest first and stops at the first
// intact one. Damaged checkpoints are skipped (and reported); a storage error stops the
// search, since falling back because storage is unreachable would restore older state
// than necessary. Complete ids but none intact is an error: starting fresh would
// repeat output a two-phase sink already committed.
func (s *checkpointStore) newestIntact(ctx context.Context, complete []int64) (restorePoint, error) {
	rp := restorePoint{damaged: map[int64]error{}}
	ids := slices.Clone(complete)
	slices.Sort(ids)
	for i := len(ids) - 1; i >= 0; i-- {
		_, err := s.validate(ctx, ids[i])
		if err == nil {
			rp.latest = ids[i]
			rp.adopt = ids[:i+1]
			return rp, nil
		}
		if !errors.Is(err, errDamagedCheckpoint) {
			return rp, err
		}
		rp.damaged[ids[i]] = err
	}
	if len(ids) > 0 {
		errs := make([]error, 0, len(ids))
		for _, id := range ids {
			errs = append(errs, rp.damaged[id])
		}
		return rp, fmt.Errorf("none of the %d complete checkpoints of job %s in %s can be restored: %w",
			len(ids), s.jobID, s.st.URI(), errors.Join(errs...))
	}
	return rp, nil
}
