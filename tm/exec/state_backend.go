package exec

import (
	"fmt"

	"github.com/tidestream/tide/core/jobgraph"
	"github.com/tidestream/tide/state"
)

// StateBackendConfig selects the keyed state backend of the subtasks (state.backend.*).
type StateBackendConfig struct {
	// Type is hashmap (default) or pebble.
	Type state.Type
	// Dir is the parent of the pebble instances' directories (empty: the temp dir).
	Dir string
	// Incremental (execution.checkpointing.incremental) makes pebble checkpoints upload
	// only the tables not yet in checkpoint storage (checkpoint_incremental.go).
	Incremental bool
	// LocalRecovery (state.backend.local-recovery) keeps each subtask's last checkpoint
	// files in the TaskManager's local state store and restores from there first.
	LocalRecovery bool
	// LocalDir is the root of the local state store's directory
	// (taskmanager.state.local.root-dirs; empty: Dir). Each TaskManager process has a
	// directory of its own under it (tm/localstate OpenNew).
	LocalDir string
	// SynchronousHeapSnapshots makes the heap backend's keyed state write its entries at
	// the barrier, on the subtask's goroutine, as before its copy-on-write snapshots (the
	// throughput benchmark's baseline); by default an asynchronous checkpoint takes a
	// copy-on-write view at the barrier and encodes it during the upload.
	SynchronousHeapSnapshots bool
	// UploadNice (state.backend.upload.nice, 0..19; the TaskManager sets 5 by default)
	// lowers the uploaders' threads' priority by that many nice steps below the
	// TaskManager's (lowerUploadPriority); 0 keeps them at its priority.
	UploadNice int
	// Memory is the TaskManager's managed memory, shared by its pebble instances (nil:
	// Pebble's own defaults per instance).
	Memory *state.Memory
}

// openBackend opens the subtask's keyed state backend: a fresh instance per subtask
// attempt, for vertices with a keyed (hash) input only; others keep the nil hashmap.
func (t *task) openBackend() error {
	if t.restoredDB != nil {
		t.backend, t.restoredDB = t.restoredDB, nil
		t.log.Info("keyed state in pebble, restored from database files", "dir", t.backend.(*state.PebbleBackend).Dir())
		return nil
	}
	if t.e.cfg.StateBackend.Type != state.Pebble || !t.keyedInput() {
		return nil
	}
	be, err := state.OpenPebble(t.pebbleOptions())
	if err != nil {
		return fmt.Errorf("subtask %s-%d: %w", t.vertex.ID, t.index, err)
	}
	t.log.Info("keyed state in pebble", "dir", be.Dir())
	t.backend = be
	return nil
}

func (t *task) pebbleOptions() state.PebbleOptions {
	return state.PebbleOptions{
		Dir:    t.e.cfg.StateBackend.Dir,
		Name:   fmt.Sprintf("%s-%d-%d", t.vertex.ID, t.index, t.a.id),
		Memory: t.e.cfg.StateBackend.Memory,
		Logger: t.log,
		// A merge links the tables a local copy prepared (prepared_restore.go).
		Linkable: t.e.preparedTables(),
	}
}

func (t *task) keyedInput() bool {
	for _, in := range t.vertex.Inputs {
		if in.Kind == jobgraph.Hash {
			return true
		}
	}
	return false
}

// retireBackend tells a cancelled subtask's Pebble instances that their state will be
// thrown away (state.PebbleBackend.Retire: no new compactions) before their close, which
// runs in the background while the next attempt restores.
func (t *task) retireBackend() {
	for _, b := range []state.Backend{t.restoredDB, t.backend} {
		if pb, ok := b.(*state.PebbleBackend); ok && pb != nil {
			pb.Retire()
		}
	}
}

func (t *task) closeBackend() {
	if t.restoredDB != nil { // restored, then the operators failed to open
		_ = t.restoredDB.Close()
		t.restoredDB = nil
	}
	if t.backend == nil {
		return
	}
	if err := t.backend.Close(); err != nil {
		t.log.Warn("closing the keyed state backend", "err", err)
	}
	t.backend = nil
}
