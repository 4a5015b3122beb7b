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
}

// openBackend opens the subtask's keyed state backend: a fresh instance per subtask
// attempt, for vertices with a keyed (hash) input only; others keep the nil hashmap.
func (t *task) openBackend() error {
	if t.e.cfg.StateBackend.Type != state.Pebble || !t.keyedInput() {
		return nil
	}
	be, err := state.OpenPebble(state.PebbleOptions{
		Dir:    t.e.cfg.StateBackend.Dir,
		Name:   fmt.Sprintf("%s-%d-%d", t.vertex.ID, t.index, t.a.id),
		Logger: t.log,
	})
	if err != nil {
		return fmt.Errorf("subtask %s-%d: %w", t.vertex.ID, t.index, err)
	}
	t.log.Info("keyed state in pebble", "dir", be.Dir())
	t.backend = be
	return nil
}

func (t *task) keyedInput() bool {
	for _, in := range t.vertex.Inputs {
		if in.Kind == jobgraph.Hash {
			return true
		}
	}
	return false
}

func (t *task) closeBackend() {
	if t.backend == nil {
		return
	}
	if err := t.backend.Close(); err != nil {
		t.log.Warn("closing the keyed state backend", "err", err)
	}
	t.backend = nil
}
