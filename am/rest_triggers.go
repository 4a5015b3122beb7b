package am

import (
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"net/http"
	"slices"
	"sync"

	"github.com/tidestream/tide/core/checkpoint"
)

// Kinds of operation started by POST and polled by trigger id.
type operationKind string

const (
	opCheckpoint operationKind = "checkpoint"
	opSavepoint  operationKind = "savepoint"
	opStop       operationKind = "stop-with-savepoint"
)

// Operation states, as Flink's asynchronous operation status spells them.
const (
	opInProgress = "IN_PROGRESS"
	opCompleted  = "COMPLETED"
	opFailed     = "FAILED"
)

// maxOperations bounds the remembered operations; the oldest finished ones go first.
const maxOperations = 200

// operation is one triggered checkpoint, savepoint or stop-with-savepoint.
type operation struct {
	ID   string
	Kind operationKind
	// Checkpoint is the checkpoint the operation waits for; 0 while unknown, in which case
	// it is the first checkpoint with an id greater than After.
	Checkpoint int64
	After      int64
	TargetDir  string
	Status     string
	// copying: the checkpoint completed and its files are being copied to TargetDir.
	copying bool
	// direct: a canonical savepoint, written into TargetDir by the subtasks; the
	// checkpoint coordinator finishes it (checkpoint_savepoint_trigger.go).
	direct   bool
	Location string
	Failure  string
	// awaited: a client waits for the result, so the AM keeps REST up after the job ended
	// until it is read (see restLinger): a stop-with-savepoint, or any operation still in
	// progress when the job ended. read: its finished result was answered to a poll.
	awaited bool
	read    bool
}

// triggers remembers operations by trigger id; any goroutine may use it.
type triggers struct {
	mu    sync.Mutex
	ops   map[string]*operation
	order []string
}

func newTriggers() *triggers { return &triggers{ops: map[string]*operation{}} }

// newTriggerID is a random 32-hex-digit id, the shape of Flink's TriggerId.
func newTriggerID() string {
	var b [16]byte
	_, _ = rand.Read(b[:])
	return hex.EncodeToString(b[:])
}

// add remembers op under its id (a fresh one when empty) and returns the id.
func (t *triggers) add(op operation) string {
	if op.ID == "" {
		op.ID = newTriggerID()
	}
	op.Status = opInProgress
	op.awaited = op.Kind == opStop
	t.mu.Lock()
	defer t.mu.Unlock()
	t.ops[op.ID] = &op
	t.order = append(t.order, op.ID)
	for len(t.order) > maxOperations {
		i := slices.IndexFunc(t.order, func(id string) bool { return t.ops[id].Status != opInProgress })
		if i < 0 {
			break
		}
		delete(t.ops, t.order[i])
		t.order = slices.Delete(t.order, i, i+1)
	}
	return op.ID
}

// has reports whether id is taken.
func (t *triggers) has(id string) bool {
	t.mu.Lock()
	defer t.mu.Unlock()
	_, ok := t.ops[id]
	return ok
}

// free refuses a trigger id the client chose that names an operation already (409).
func (t *triggers) free(id string) error {
	if id != "" && t.has(id) {
		return statusErrorf(http.StatusConflict, "triggerId %s is already in use: omit it or pick a new one", id)
	}
	return nil
}

// poll returns a copy of the operation id of the given kind, as get, for a client polling
// it: a finished result returned here counts as read.
func (t *triggers) poll(id string, kinds ...operationKind) (operation, bool) {
	t.mu.Lock()
	defer t.mu.Unlock()
	op, ok := t.ops[id]
	if !ok || !slices.Contains(kinds, op.Kind) {
		return operation{}, false
	}
	if op.Status != opInProgress {
		op.read = true
	}
	return *op, true
}

// jobEnded marks every operation still in progress as awaited: its client is polling
// and should get the outcome the job's end gives it.
func (t *triggers) jobEnded() {
	t.mu.Lock()
	defer t.mu.Unlock()
	for _, op := range t.ops {
		if op.Status == opInProgress {
			op.awaited = true
		}
	}
}

// unread counts the awaited operations whose result no poll has returned yet.
func (t *triggers) unread() int {
	t.mu.Lock()
	defer t.mu.Unlock()
	n := 0
	for _, op := range t.ops {
		if op.awaited && (op.Status == opInProgress || !op.read) {
			n++
		}
	}
	return n
}

// remove forgets operation id (its trigger was refused).
func (t *triggers) remove(id string) {
	t.mu.Lock()
	defer t.mu.Unlock()
	delete(t.ops, id)
	t.order = slices.DeleteFunc(t.order, func(s string) bool { return s == id })
}

// setCheckpoint records the checkpoint id a direct savepoint got.
func (t *triggers) setCheckpoint(id string, checkpointID int64) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if op, ok := t.ops[id]; ok {
		op.Checkpoint = checkpointID
	}
}

// finish records the outcome of operation id.
func (t *triggers) finish(id, location, failure string) {
	t.mu.Lock()
	defer t.mu.Unlock()
	op, ok := t.ops[id]
	if !ok {
		return
	}
	op.copying = false
	if failure != "" {
		op.Status, op.Failure = opFailed, failure
		return
	}
	op.Status, op.Location = opCompleted, location
}

// resolved is an operation whose checkpoint has an outcome.
type resolved struct {
	op     operation
	entry  checkpoint.HistoryEntry
	copyTo bool // a savepoint: copy the checkpoint to op.TargetDir
}

// resolve matches the operations in progress with the checkpoint history. Checkpoint
// operations finish here; savepoint operations whose checkpoint completed are marked
// copying and returned with copyTo set, once.
func (t *triggers) resolve(stats checkpoint.Stats, location func(id int64) string) []resolved {
	t.mu.Lock()
	defer t.mu.Unlock()
	var out []resolved
	for _, id := range t.order {
		op := t.ops[id]
		if op.Status != opInProgress || op.copying || op.direct {
			continue
		}
		e, ok := historyEntryFor(stats, op.Checkpoint, op.After)
		if !ok {
			continue
		}
		op.Checkpoint = e.ID
		switch e.Status {
		case checkpoint.StatusFailed:
			op.Status, op.Failure = opFailed, fmt.Sprintf("checkpoint %d failed: %s", e.ID, e.FailureMessage)
		case checkpoint.StatusCompleted:
			if op.Kind == opCheckpoint {
				op.Status, op.Location = opCompleted, location(e.ID)
				continue
			}
			op.copying = true
			out = append(out, resolved{op: *op, entry: e, copyTo: true})
		}
	}
	return out
}

// historyEntryFor finds checkpoint id in the history, or (id 0) the oldest checkpoint
// (not savepoint) after after.
func historyEntryFor(stats checkpoint.Stats, id, after int64) (checkpoint.HistoryEntry, bool) {
	var best checkpoint.HistoryEntry
	found := false
	for _, e := range stats.History {
		switch {
		case id == 0 && e.CheckpointType == checkpoint.TypeSavepoint:
		case id != 0 && e.ID == id:
			return e, true
		case id == 0 && e.ID > after && (!found || e.ID < best.ID):
			best, found = e, true
		}
	}
	return best, found
}
