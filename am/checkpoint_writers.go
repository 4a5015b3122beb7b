package am

import (
	"maps"
	"slices"
	"time"

	"github.com/tidestream/tide/core"
)

// abortGrace bounds how long a failed checkpoint's directory waits for its writers to
// stop before it is deleted anyway (a subtask that never reports back would otherwise
// keep it forever).
var abortGrace = 10 * time.Minute

// ckptWriters are the subtasks that may still write into one checkpoint's directory:
// those expected to acknowledge it that have not acknowledged, declined, stopped, or lost
// their TaskManager yet.
type ckptWriters struct {
	attempt  core.AttemptID
	subtasks map[core.SubtaskID]core.TaskManagerID
	// aborted: the checkpoint failed; its directory goes once no writer is left.
	aborted bool
}

// expectWriters records who writes into checkpoint id when it is triggered.
func (c *checkpointCoordinator) expectWriters(id int64, attempt core.AttemptID, placement map[core.SubtaskID]core.TaskManagerID) {
	if c.writers == nil {
		c.writers = map[int64]*ckptWriters{}
	}
	c.writers[id] = &ckptWriters{attempt: attempt, subtasks: maps.Clone(placement)}
}

// writerDone: sub of attempt acknowledged or declined checkpoint id; it writes nothing
// more into id or any older checkpoint (a subtask takes its checkpoints in order).
func (c *checkpointCoordinator) writerDone(attempt core.AttemptID, id int64, sub core.SubtaskID) {
	c.dropWriters(func(cid int64, w *ckptWriters, s core.SubtaskID, _ core.TaskManagerID) bool {
		return w.attempt == attempt && cid <= id && s == sub
	})
}

// writerStopped: sub of attempt was cancelled or failed; it writes nothing more.
func (c *checkpointCoordinator) writerStopped(attempt core.AttemptID, sub core.SubtaskID) {
	c.dropWriters(func(_ int64, w *ckptWriters, s core.SubtaskID, _ core.TaskManagerID) bool {
		return w.attempt == attempt && s == sub
	})
}

// writersGone: TaskManager tm is gone; its subtasks write nothing more.
func (c *checkpointCoordinator) writersGone(tm core.TaskManagerID) {
	c.dropWriters(func(_ int64, _ *ckptWriters, _ core.SubtaskID, on core.TaskManagerID) bool { return on == tm })
}

func (c *checkpointCoordinator) dropWriters(match func(int64, *ckptWriters, core.SubtaskID, core.TaskManagerID) bool) {
	for _, id := range slices.Sorted(maps.Keys(c.writers)) {
		w := c.writers[id]
		for s, tm := range w.subtasks {
			if match(id, w, s, tm) {
				delete(w.subtasks, s)
			}
		}
		if w.aborted && len(w.subtasks) == 0 {
			delete(c.writers, id)
			c.log.Info("every writer of the failed checkpoint has stopped; deleting it", "checkpoint", id, "path", c.chkPath(id))
			c.discard(id)
		}
	}
}

// aborted deletes the directory of failed checkpoint id once no subtask may still write
// into it (at once when none may), or after abortGrace.
func (c *checkpointCoordinator) aborted(id int64) {
	w := c.writers[id]
	if w == nil || len(w.subtasks) == 0 {
		delete(c.writers, id)
		c.discard(id)
		return
	}
	w.aborted = true
	c.log.Info("failed checkpoint: deleting its directory once its writers have stopped",
		"checkpoint", id, "writers", len(w.subtasks), "path", c.chkPath(id))
	c.am.clock.AfterFunc(abortGrace, func() {
		c.am.post(func() {
			if cur, ok := c.writers[id]; ok && cur == w {
				delete(c.writers, id)
				c.log.Warn("writers of the failed checkpoint did not report back; deleting it anyway",
					"checkpoint", id, "writers", len(w.subtasks), "after", abortGrace)
				c.discard(id)
			}
		})
	})
}

// completed forgets the writers of a checkpoint that completed (all acknowledged).
func (c *checkpointCoordinator) completedWriters(id int64) { delete(c.writers, id) }
