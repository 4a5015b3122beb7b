package am

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"path"
	"slices"
	"strings"
	"time"

	"github.com/tidestream/tide/core/checkpoint"
	"github.com/tidestream/tide/storage"
)

// A canonical savepoint is written by the subtasks straight into its own directory, far
// from the job's checkpoints (state.savepoints.dir or an allowed directory): a new AM's
// checkpoint recovery never lists it. So that an AM that dies mid-savepoint leaves no
// partial savepoint behind, the AM records every canonical savepoint directory in its
// persisted state (amState.Savepoints) before any subtask may write into it (the REST
// request waits until that is durable), and forgets it once the savepoint completed (it
// is the user's then) or its directory is deleted after a failure.
//
// The next AM reads the records: a directory with _metadata is a savepoint the dead AM
// completed (kept, and logged with its location); any other is deleted at once, and
// again once no subtask the dead AM ran can still write into it: when the new AM adopts
// the running subtasks, with the checkpoint the dead AM left in flight (which the
// savepoint was, when it had been triggered), once every adopted subtask acknowledged a
// later checkpoint (see abandonInFlight); when it restores instead, once it decided so
// (the old subtasks are cancelled).

// persistedSavepoint is a canonical savepoint directory that may hold a partial savepoint.
type persistedSavepoint struct {
	StorageURI string `json:"storage_uri"`
	Dir        string `json:"dir"`
	// Checkpoint is the savepoint's checkpoint id once triggered (0: queued, or not
	// persisted yet).
	Checkpoint int64 `json:"checkpoint,omitempty"`
}

// lostSavepoint is a savepoint directory a previous AM left without _metadata.
type lostSavepoint struct {
	persistedSavepoint
	// attached: it waits for the writers of the checkpoint the dead AM left in flight
	// (Checkpoint is that id); discard deletes it with that checkpoint.
	attached bool
}

// savepointKey names a savepoint directory in the records.
func savepointKey(storageURI, dir string) string {
	return strings.TrimSuffix(storageURI, "/") + "/" + dir
}

// recordSavepointDir records run's directory, before it is triggered, and returns the AM
// state version that holds the record (loop goroutine).
func (c *checkpointCoordinator) recordSavepointDir(run *savepointRun) uint64 {
	if c.spDirs == nil {
		c.spDirs = map[string]*savepointRun{}
	}
	c.spDirs[savepointKey(run.targetURI, run.dir)] = run
	c.am.stateDirty = true
	return c.am.persistState()
}

// forgetSavepointDir drops run's record: its savepoint completed, or its directory is
// gone or was never written (loop goroutine).
func (c *checkpointCoordinator) forgetSavepointDir(run *savepointRun) {
	k := savepointKey(run.targetURI, run.dir)
	if c.spDirs[k] == run {
		delete(c.spDirs, k)
		c.am.stateDirty = true
	}
}

// persistedSavepoints are the records the AM state holds (loop goroutine).
func (c *checkpointCoordinator) persistedSavepoints() []persistedSavepoint {
	var out []persistedSavepoint
	for _, k := range slices.Sorted(maps.Keys(c.spDirs)) {
		r := c.spDirs[k]
		out = append(out, persistedSavepoint{StorageURI: r.targetURI, Dir: r.dir, Checkpoint: r.id})
	}
	for _, l := range c.lostSavepoints {
		out = append(out, l.persistedSavepoint)
	}
	return out
}

// lostSavepointTimeout bounds looking at and deleting one lost savepoint directory.
const lostSavepointTimeout = time.Minute

// recoverSavepoints takes over the savepoint records of the previous AM (before the loop
// starts): a completed savepoint is kept and logged, a partial one deleted now; with a
// deployment to adopt or restore (adopting: the dead AM's subtasks may still write), the
// partial ones are remembered for a second delete (see settleLostSavepoints).
func (c *checkpointCoordinator) recoverSavepoints(ctx context.Context, recs []persistedSavepoint, deploymentRan bool) {
	for _, p := range recs {
		loc := savepointKey(p.StorageURI, p.Dir)
		complete, err := deleteUnlessComplete(ctx, p)
		switch {
		case err != nil:
			c.log.Warn("could not delete the partial directory of a savepoint the lost AM left in flight; trying again later",
				"savepoint", loc, "checkpoint", p.Checkpoint, "err", err)
		case complete:
			c.log.Info("savepoint completed by the lost AM kept", "savepoint", loc, "checkpoint", p.Checkpoint)
			continue
		default:
			c.log.Info("deleted the partial directory of a savepoint the lost AM left in flight", "savepoint", loc, "checkpoint", p.Checkpoint)
		}
		if deploymentRan {
			c.lostSavepoints = append(c.lostSavepoints, &lostSavepoint{persistedSavepoint: p})
		}
	}
	c.am.stateDirty = true
}

// deleteUnlessComplete deletes savepoint directory p unless its _metadata is there.
func deleteUnlessComplete(ctx context.Context, p persistedSavepoint) (complete bool, err error) {
	ctx, cancel := context.WithTimeout(ctx, lostSavepointTimeout)
	defer cancel()
	st, err := storage.Open(ctx, p.StorageURI, storage.Options{})
	if err != nil {
		return false, fmt.Errorf("open %s: %w", p.StorageURI, err)
	}
	defer st.Close()
	_, err = st.Stat(ctx, path.Join(p.Dir, checkpoint.MetadataFile))
	switch {
	case err == nil:
		return true, nil
	case !errors.Is(err, storage.ErrNotFound):
		return false, fmt.Errorf("look for %s in %s: %w", checkpoint.MetadataFile, p.Dir, err)
	}
	if err := st.Delete(ctx, p.Dir); err != nil {
		return false, fmt.Errorf("delete %s: %w", p.Dir, err)
	}
	return false, nil
}

// attachLostSavepoints hands the lost savepoints to the checkpoint id the dead AM left in
// flight, whose writers the adopting AM waits for (loop goroutine): a savepoint whose id
// is that one, or whose id was never persisted (it may have been triggered as that one).
func (c *checkpointCoordinator) attachLostSavepoints(id int64) {
	for _, l := range c.lostSavepoints {
		if l.Checkpoint == 0 || l.Checkpoint == id {
			l.Checkpoint, l.attached = id, true
		}
	}
}

// settleLostSavepoints deletes the lost savepoint directories again and forgets them
// (loop goroutine): all of them not attached once the AM decided about the previous
// deployment, or those attached to checkpoint id when its directory goes (id > 0).
func (c *checkpointCoordinator) settleLostSavepoints(id int64) {
	var settle []*lostSavepoint
	c.lostSavepoints = slices.DeleteFunc(c.lostSavepoints, func(l *lostSavepoint) bool {
		if (id == 0 && !l.attached) || (id > 0 && l.attached && l.Checkpoint == id) {
			settle = append(settle, l)
			return true
		}
		return false
	})
	if len(settle) == 0 {
		return
	}
	c.am.stateDirty = true
	c.bg.Add(1)
	go func() {
		defer c.bg.Done()
		for _, l := range settle {
			loc := savepointKey(l.StorageURI, l.Dir)
			complete, err := deleteUnlessComplete(c.stopCtx, l.persistedSavepoint)
			switch {
			case err != nil:
				c.log.Warn("could not delete the partial directory of a savepoint the lost AM left in flight", "savepoint", loc, "err", err)
			case !complete:
				c.log.Info("no subtask of the lost AM writes into its savepoint any more: its partial directory is gone",
					"savepoint", loc, "checkpoint", l.Checkpoint)
			}
		}
	}()
}
