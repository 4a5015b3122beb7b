package am

import (
	"context"
	"errors"
	"fmt"
	"path"
	"slices"
	"strconv"
	"strings"

	"github.com/tidestream/tide/core/checkpoint"
	"github.com/tidestream/tide/storage"
)

// Shared checkpoint files (incremental checkpoints, execution.checkpointing.incremental).
//
// TaskManagers upload a pebble table once, to <job>/shared/ beside the chk-<n>/
// directories (Flink's layout), and every later checkpoint that still uses it lists it
// again in its _metadata. The AM reference-counts those files (Flink's
// SharedStateRegistry): a count is the number of retained complete checkpoints whose
// _metadata lists the file. When retention deletes a checkpoint, each of its shared files
// loses one count, and a file at zero is deleted. The counts live in no file of their
// own: a new AM rebuilds them from the _metadata of the checkpoints it adopts, so an AM
// failover deletes nothing in use.
//
// Orphans — shared files no complete checkpoint lists: uploads of a checkpoint that
// failed, timed out, or was in flight when an AM died — are collected by listing shared/:
// when an AM starts (no checkpoint of its own is in flight then, and every file there
// that the adopted checkpoints do not list is garbage), and after a checkpoint completes
// following a failed one. A shared name carries the id of the checkpoint that uploaded it
// ("-c<id>-"); the second collection deletes only files of checkpoints up to the one that
// just completed (at most one checkpoint is in flight, so none of those can still
// become complete). TaskManagers list again only tables of checkpoints the AM confirmed,
// so an orphan is never referenced later.
//
// A checkpoint that lists a shared file already deleted (its last checkpoint was
// subsumed while a TaskManager had not heard of the newer one yet) is not completed: the
// AM checks, before writing _metadata, that every shared file it does not count yet was
// not deleted and exists.

// sharedDir is where a job's shared files live, relative to the storage root.
func sharedDir(jobID string) string { return jobID + "/shared" }

// isShared reports whether a handle name is a shared file of job.
func isShared(jobID, name string) bool { return strings.HasPrefix(name, sharedDir(jobID)+"/") }

// sharedUploader returns the id of the checkpoint that uploaded a shared file (0: unknown).
func sharedUploader(name string) int64 {
	base := path.Base(name)
	for {
		i := strings.Index(base, "-c")
		if i < 0 {
			return 0
		}
		base = base[i+2:]
		j := strings.IndexByte(base, '-')
		if j > 0 {
			if id, err := strconv.ParseInt(base[:j], 10, 64); err == nil && id > 0 {
				return id
			}
		}
	}
}

// sharedNames lists the distinct shared files of subtask handles.
func sharedNames(jobID string, subtasks []checkpoint.SubtaskState) []string {
	var out []string
	for _, st := range subtasks {
		for _, h := range st.Handles {
			if isShared(jobID, h.Name) {
				out = append(out, h.Name)
			}
		}
	}
	slices.Sort(out)
	return slices.Compact(out)
}

// sharedRegistry counts the shared files of the retained checkpoints (loop goroutine).
type sharedRegistry struct {
	counts       map[string]int
	byCheckpoint map[int64][]string
	// gone are files deleted or being deleted: a checkpoint listing one cannot complete.
	gone map[string]bool
	// orphans says a checkpoint failed since shared/ was last collected.
	orphans bool
}

func newSharedRegistry() *sharedRegistry {
	return &sharedRegistry{counts: map[string]int{}, byCheckpoint: map[int64][]string{}, gone: map[string]bool{}}
}

// register counts the shared files of retained checkpoint id.
func (r *sharedRegistry) register(id int64, names []string) {
	if _, ok := r.byCheckpoint[id]; ok || len(names) == 0 {
		return
	}
	r.byCheckpoint[id] = names
	for _, n := range names {
		r.counts[n]++
	}
}

// release drops checkpoint id's counts and returns the files no retained checkpoint
// lists any more (marked gone).
func (r *sharedRegistry) release(id int64) []string {
	names := r.byCheckpoint[id]
	delete(r.byCheckpoint, id)
	var free []string
	for _, n := range names {
		if r.counts[n]--; r.counts[n] <= 0 {
			delete(r.counts, n)
			r.gone[n] = true
			free = append(free, n)
		}
	}
	return free
}

// uncounted splits names a completing checkpoint lists into those no retained
// checkpoint counts (to check in storage) and those already deleted.
func (r *sharedRegistry) uncounted(names []string) (unknown, gone []string) {
	for _, n := range names {
		switch {
		case r.gone[n]:
			gone = append(gone, n)
		case r.counts[n] == 0:
			unknown = append(unknown, n)
		}
	}
	return unknown, gone
}

// counted returns a copy of the counted names (for a collection off the loop).
func (r *sharedRegistry) counted() map[string]bool {
	out := make(map[string]bool, len(r.counts))
	for n := range r.counts {
		out[n] = true
	}
	return out
}

// checkShared refuses a completing checkpoint that lists a deleted shared file or one
// that is not in storage.
func (s *checkpointStore) checkShared(ctx context.Context, id int64, unknown, gone []string) error {
	if len(gone) > 0 {
		return fmt.Errorf("checkpoint %d of job %s lists shared files already deleted (no retained checkpoint used them any more): %s",
			id, s.jobID, strings.Join(gone, ", "))
	}
	for _, n := range unknown {
		if _, err := s.st.Stat(ctx, n); err != nil {
			return fmt.Errorf("checkpoint %d of job %s lists shared file %s: %w", id, s.jobID, n, err)
		}
	}
	return nil
}

// deleteShared deletes shared files; a file already gone is not an error.
func (s *checkpointStore) deleteShared(ctx context.Context, names []string) error {
	var errs []error
	for _, n := range names {
		if err := s.st.Delete(ctx, n); err != nil && !errors.Is(err, storage.ErrNotFound) {
			errs = append(errs, fmt.Errorf("delete shared file %s: %w", n, err))
		}
	}
	return errors.Join(errs...)
}

// orphans lists the files in shared/ that keep does not hold and that a checkpoint up
// to upTo uploaded (upTo 0: any).
func (s *checkpointStore) orphans(ctx context.Context, keep map[string]bool, upTo int64) ([]string, error) {
	entries, err := s.st.List(ctx, sharedDir(s.jobID))
	if errors.Is(err, storage.ErrNotFound) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("list %s in %s: %w", sharedDir(s.jobID), s.st.URI(), err)
	}
	var out []string
	for _, e := range entries {
		if e.IsDir {
			continue
		}
		name := sharedDir(s.jobID) + "/" + e.Name
		if keep[name] {
			continue
		}
		if by := sharedUploader(name); upTo > 0 && (by == 0 || by > upTo) {
			continue
		}
		out = append(out, name)
	}
	return out, nil
}

// rebuildShared counts the shared files of the checkpoints a new AM retains, from their
// _metadata, and deletes the orphans in shared/ (recovery, before the loop).
func (c *checkpointCoordinator) rebuildShared(ctx context.Context, retained []int64) error {
	for _, id := range retained {
		md, err := c.store.readMetadata(ctx, id)
		if err != nil {
			return fmt.Errorf("rebuilding the shared-file counts from checkpoint %d: %w", id, err)
		}
		c.sharedFiles().register(id, sharedNames(c.store.jobID, md.Subtasks))
	}
	orphans, err := c.store.orphans(ctx, c.sharedFiles().counted(), 0)
	if err != nil {
		return err
	}
	if len(c.shared.counts) > 0 || len(orphans) > 0 {
		c.log.Info("shared checkpoint files counted from the retained checkpoints", "checkpoints", len(retained),
			"files", len(c.shared.counts), "orphansDeleted", len(orphans))
	}
	return c.store.deleteShared(ctx, orphans)
}

// collectOrphans deletes, off the loop, the shared files of failed checkpoints up to upTo.
func (c *checkpointCoordinator) collectOrphans(upTo int64) {
	keep := c.sharedFiles().counted()
	c.sharedFiles().orphans = false
	c.bg.Add(1)
	go func() {
		defer c.bg.Done()
		ctx, cancel := context.WithTimeout(c.stopCtx, c.timeout)
		defer cancel()
		orphans, err := c.store.orphans(ctx, keep, upTo)
		if err == nil {
			err = c.store.deleteShared(ctx, orphans)
		}
		if err != nil {
			c.log.Warn("collecting orphaned shared checkpoint files", "err", err)
			return
		}
		if len(orphans) > 0 {
			c.log.Info("deleted orphaned shared checkpoint files", "files", len(orphans), "upToCheckpoint", upTo)
		}
	}()
}

// sharedFiles is the coordinator's registry (created on first use).
func (c *checkpointCoordinator) sharedFiles() *sharedRegistry {
	if c.shared == nil {
		c.shared = newSharedRegistry()
	}
	return c.shared
}
