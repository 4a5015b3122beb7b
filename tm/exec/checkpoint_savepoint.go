package exec

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"path"

	"github.com/tidestream/tide/core/checkpoint"
	"github.com/tidestream/tide/storage"
)

// Savepoints (Flink's CheckpointType SAVEPOINT). The AM triggers a savepoint like a
// checkpoint, with a SavepointTarget: the sources learn it from the trigger and send it
// on with their barrier (a savepoint barrier, tagSavepointBarrier), so every subtask knows
// at its barrier that this checkpoint is a savepoint and where it goes, whatever the order
// in which the AM's trigger and the barriers reach its TaskManager. A subtask then writes
// its state the way a full checkpoint does — the canonical state file, the keyed state in
// full from a view of the backend, even with execution.checkpointing.incremental — into
// the savepoint's own directory, under a name relative to it. Nothing of a savepoint goes
// to <job>/shared/ or to the local state store, and it never becomes the base of an
// incremental checkpoint: the incremental chain goes on as if it had not happened.

// SavepointTarget is where and how the subtasks write a savepoint: its format (only
// CANONICAL is written by the subtasks; a NATIVE savepoint is a copy the AM makes of a
// checkpoint) and its directory Dir under the storage root StorageURI.
type SavepointTarget struct {
	Format     string
	StorageURI string
	Dir        string
}

// maxSavepointField bounds each string of a savepoint barrier.
const maxSavepointField = 1 << 16

func appendSavepointBarrier(dst []byte, id, ts int64, sp SavepointTarget) []byte {
	dst = binary.AppendVarint(append(dst, tagSavepointBarrier), id)
	dst = binary.AppendVarint(dst, ts)
	for _, s := range []string{sp.Format, sp.StorageURI, sp.Dir} {
		dst = binary.AppendUvarint(dst, uint64(len(s)))
		dst = append(dst, s...)
	}
	return dst
}

// parseSavepointTarget reads the three strings after a savepoint barrier's timestamp.
func parseSavepointTarget(b []byte) (SavepointTarget, error) {
	var fields [3]string
	for i, name := range []string{"format", "storage URI", "directory"} {
		n, k := binary.Uvarint(b)
		if k <= 0 || n > maxSavepointField || n > uint64(len(b)-k) {
			return SavepointTarget{}, fmt.Errorf("bad %s", name)
		}
		fields[i] = string(b[k : k+int(n)])
		b = b[k+int(n):]
	}
	if len(b) != 0 {
		return SavepointTarget{}, fmt.Errorf("%d unexpected trailing bytes", len(b))
	}
	return SavepointTarget{Format: fields[0], StorageURI: fields[1], Dir: fields[2]}, nil
}

// TriggerSavepoint is TriggerCheckpoint for a savepoint: the attempt's subtasks write
// checkpoint checkpointID in full into target instead of chk-<n>/.
func (e *Executor) TriggerSavepoint(attemptID, checkpointID, timestampMillis int64, target SavepointTarget) {
	if a := e.attempt(attemptID); a != nil {
		a.noteSavepoint(checkpointID, &target)
	}
	e.TriggerCheckpoint(attemptID, checkpointID, timestampMillis)
}

// keptSavepoints bounds how many savepoint targets an attempt remembers (the newest).
const keptSavepoints = 16

// noteSavepoint records that checkpoint id is a savepoint into sp (nil: nothing to note).
func (a *attempt) noteSavepoint(id int64, sp *SavepointTarget) {
	if sp == nil {
		return
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.savepoints == nil {
		a.savepoints = map[int64]SavepointTarget{}
	}
	a.savepoints[id] = *sp
	for n := range a.savepoints {
		if n <= id-keptSavepoints {
			delete(a.savepoints, n)
		}
	}
}

// savepoint returns the target of checkpoint id if it is a savepoint, nil otherwise.
func (a *attempt) savepoint(id int64) *SavepointTarget {
	a.mu.Lock()
	defer a.mu.Unlock()
	sp, ok := a.savepoints[id]
	if !ok {
		return nil
	}
	return &sp
}

// barrierOf sends barrier id downstream: a savepoint barrier when sp is set.
func (r *router) barrierOf(id, ts int64, sp *SavepointTarget) error {
	if sp == nil {
		return r.barrier(id, ts)
	}
	r.buf = appendSavepointBarrier(r.buf[:0], id, ts, *sp)
	return r.broadcast(r.buf)
}

// errSavepointFormat: the subtasks write only canonical savepoints.
var errSavepointFormat = errors.New("savepoint format not written by subtasks")

// writeSavepointFile writes one subtask state file of a savepoint into its directory
// and returns its handle, named relative to that directory.
func (t *task) writeSavepointFile(ctx context.Context, sp SavepointTarget, write func(io.Writer) (int64, error)) (StateHandle, error) {
	if checkpoint.FormatType(sp.Format) != checkpoint.FormatCanonical {
		return StateHandle{}, fmt.Errorf("%w: %q (expected %s)", errSavepointFormat, sp.Format, checkpoint.FormatCanonical)
	}
	st := t.e.cfg.Storage
	if st == nil || st.URI() != sp.StorageURI {
		var err error
		st, err = storage.Open(ctx, sp.StorageURI, storage.Options{Logger: t.log})
		if err != nil {
			return StateHandle{}, fmt.Errorf("savepoint into %s/%s: open its storage: %w", sp.StorageURI, sp.Dir, err)
		}
		defer func() {
			if err := st.Close(); err != nil {
				t.log.Warn("closing the savepoint storage", "storage", sp.StorageURI, "err", err)
			}
		}()
	}
	name := StateFileName(t.vertex.ID, t.index)
	h, _, err := t.writeTee(ctx, st, path.Join(sp.Dir, name), "", write) // no local copy
	if err != nil {
		return StateHandle{}, fmt.Errorf("savepoint into %s: %w", st.URI(), err)
	}
	h.Name = name // relative to the savepoint's directory
	return h, nil
}
