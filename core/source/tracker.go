package source

import (
	"errors"
	"fmt"
	"maps"
	"slices"
)

var (
	// ErrNotRegistered: splits were assigned to a subtask with no registered reader.
	ErrNotRegistered = errors.New("subtask is not registered")
	// ErrAlreadyRegistered: a reader attempt registered twice.
	ErrAlreadyRegistered = errors.New("reader attempt already registered")
	// ErrCheckpointOrder: a coordinator checkpoint id did not increase.
	ErrCheckpointOrder = errors.New("checkpoint id does not increase")
	// ErrInvalidSplit: a split without id, or a negative subtask index.
	ErrInvalidSplit = errors.New("invalid split assignment")
)

// Tracker is the coordinator's record of readers and split assignments. It is not safe
// for concurrent use; the AM's event loop owns it.
type Tracker struct {
	readers      map[int]map[int64]bool // subtask → registered attempts
	epochs       []Epoch                // sealed, not yet confirmed; ascending checkpoint
	current      map[int][]Split        // assignments since the last snapshot
	noMoreSplits map[int]bool
	lastSnapshot int64 // NoCheckpoint before the first snapshot
	lastComplete int64 // NoCheckpoint before the first completed checkpoint

	seq uint64
	log []Entry
}

// NewTracker returns an empty tracker.
func NewTracker() *Tracker {
	return &Tracker{
		readers: map[int]map[int64]bool{}, current: map[int][]Split{}, noMoreSplits: map[int]bool{},
		lastSnapshot: NoCheckpoint, lastComplete: NoCheckpoint,
	}
}

// RegisterReader records that attempt of subtask registered. first is true when no
// other attempt of the subtask is registered: then the enumerator's AddReader runs.
func (t *Tracker) RegisterReader(subtask int, attempt int64) (first bool, err error) {
	if subtask < 0 {
		return false, fmt.Errorf("register reader %d attempt %d: %w: negative subtask", subtask, attempt, ErrInvalidSplit)
	}
	if t.readers[subtask][attempt] {
		return false, fmt.Errorf("register reader %d attempt %d: %w", subtask, attempt, ErrAlreadyRegistered)
	}
	t.record(Entry{Kind: KindRegister, Subtask: subtask, Attempt: attempt})
	return t.applyRegister(subtask, attempt), nil
}

func (t *Tracker) applyRegister(subtask int, attempt int64) bool {
	first := len(t.readers[subtask]) == 0
	if t.readers[subtask] == nil {
		t.readers[subtask] = map[int64]bool{}
	}
	t.readers[subtask][attempt] = true
	return first
}

// UnregisterReader forgets attempt of subtask (its execution failed); unknown readers
// are ignored. Splits stay recorded: they go back only on ReaderFailed / ReaderReset.
func (t *Tracker) UnregisterReader(subtask int, attempt int64) {
	if !t.readers[subtask][attempt] {
		return
	}
	t.record(Entry{Kind: KindUnregister, Subtask: subtask, Attempt: attempt})
	t.applyUnregister(subtask, attempt)
}

func (t *Tracker) applyUnregister(subtask int, attempt int64) {
	delete(t.readers[subtask], attempt)
	if len(t.readers[subtask]) == 0 {
		delete(t.readers, subtask)
	}
}

// Readers returns every registered reader attempt, sorted by subtask and attempt.
func (t *Tracker) Readers() []Reader {
	var out []Reader
	for _, s := range slices.Sorted(maps.Keys(t.readers)) {
		for _, a := range slices.Sorted(maps.Keys(t.readers[s])) {
			out = append(out, Reader{Subtask: s, Attempt: a})
		}
	}
	return out
}

// IsRegistered reports whether some attempt of subtask is registered.
func (t *Tracker) IsRegistered(subtask int) bool { return len(t.readers[subtask]) > 0 }

// Assign records splits handed to readers. Every target must be registered and every
// split must have an id; otherwise nothing is recorded.
func (t *Tracker) Assign(as ...Assignment) error {
	for _, a := range as {
		if !t.IsRegistered(a.Subtask) {
			return fmt.Errorf("cannot assign splits %v to subtask %d: %w", splitIDs(a.Splits), a.Subtask, ErrNotRegistered)
		}
		for _, s := range a.Splits {
			if s.ID == "" {
				return fmt.Errorf("assign splits to subtask %d: %w: split without id", a.Subtask, ErrInvalidSplit)
			}
		}
	}
	m := map[int][]Split{}
	for _, a := range as {
		m[a.Subtask] = append(m[a.Subtask], a.Splits...)
	}
	norm := assignments(m)
	if len(norm) == 0 {
		return nil
	}
	t.record(Entry{Kind: KindAssign, Assignments: norm})
	t.applyAssign(norm)
	return nil
}

func (t *Tracker) applyAssign(as []Assignment) {
	for _, a := range as {
		t.current[a.Subtask] = append(t.current[a.Subtask], cloneSplits(a.Splits)...)
	}
}

// SignalNoMoreSplits records that subtask was told there are no more splits; later
// split requests from it are not forwarded to the enumerator.
func (t *Tracker) SignalNoMoreSplits(subtask int) {
	if subtask < 0 || t.noMoreSplits[subtask] {
		return
	}
	t.record(Entry{Kind: KindNoMoreSplits, Subtask: subtask})
	t.noMoreSplits[subtask] = true
}

// HasNoMoreSplits reports whether subtask was told there are no more splits.
func (t *Tracker) HasNoMoreSplits(subtask int) bool { return t.noMoreSplits[subtask] }

// SnapshotState seals the assignments made since the previous snapshot under
// checkpoint id: the coordinator's cut for that checkpoint. Ids must increase.
func (t *Tracker) SnapshotState(id int64) error {
	if id <= t.lastSnapshot {
		return fmt.Errorf("snapshot split assignments for checkpoint %d: %w (last snapshot %d)", id, ErrCheckpointOrder, t.lastSnapshot)
	}
	t.record(Entry{Kind: KindSnapshot, Checkpoint: id})
	t.applySnapshot(id)
	return nil
}

func (t *Tracker) applySnapshot(id int64) {
	if len(t.current) > 0 {
		t.epochs = append(t.epochs, Epoch{Checkpoint: id, Assignments: assignments(t.current)})
	}
	t.current = map[int][]Split{}
	t.lastSnapshot = id
}

// OnCheckpointComplete drops every epoch sealed by a checkpoint ≤ id: those splits are
// in the readers' checkpointed state now.
func (t *Tracker) OnCheckpointComplete(id int64) {
	if id <= t.lastComplete {
		return
	}
	t.record(Entry{Kind: KindComplete, Checkpoint: id})
	t.applyComplete(id)
}

func (t *Tracker) applyComplete(id int64) {
	t.epochs = slices.DeleteFunc(t.epochs, func(e Epoch) bool { return e.Checkpoint <= id })
	t.lastComplete = max(t.lastComplete, id)
}

// LastCompleted is the newest completed checkpoint seen (NoCheckpoint if none).
func (t *Tracker) LastCompleted() int64 { return t.lastComplete }

// ReaderFailed resets subtask to the last completed checkpoint; see ReaderReset.
func (t *Tracker) ReaderFailed(subtask int) []Split { return t.ReaderReset(subtask, t.lastComplete) }

// ReaderReset is Flink's subtaskReset: subtask restarts from checkpoint restored
// (NoCheckpoint: from scratch). Its readers are unregistered, its no-more-splits flag is
// cleared, and the splits assigned to it after restored are removed from the tracker and
// returned, oldest first, for the enumerator's AddSplitsBack.
func (t *Tracker) ReaderReset(subtask int, restored int64) []Split {
	if subtask < 0 {
		return []Split{}
	}
	if restored < 1 {
		restored = NoCheckpoint
	}
	t.record(Entry{Kind: KindReset, Subtask: subtask, Checkpoint: restored})
	return t.applyReset(subtask, restored)
}

func (t *Tracker) applyReset(subtask int, restored int64) []Split {
	delete(t.readers, subtask)
	delete(t.noMoreSplits, subtask)
	out := []Split{}
	for i := range t.epochs {
		e := &t.epochs[i]
		if e.Checkpoint <= restored {
			continue
		}
		e.Assignments = slices.DeleteFunc(e.Assignments, func(a Assignment) bool {
			if a.Subtask == subtask {
				out = append(out, a.Splits...)
				return true
			}
			return false
		})
	}
	t.epochs = slices.DeleteFunc(t.epochs, func(e Epoch) bool { return len(e.Assignments) == 0 })
	out = append(out, t.current[subtask]...)
	delete(t.current, subtask)
	return out
}

// Uncheckpointed returns what each subtask received after the last completed
// checkpoint: sealed epochs first, then the current one.
func (t *Tracker) Uncheckpointed() []Assignment {
	m := map[int][]Split{}
	for _, e := range t.epochs {
		for _, a := range e.Assignments {
			m[a.Subtask] = append(m[a.Subtask], a.Splits...)
		}
	}
	for s, ss := range t.current {
		m[s] = append(m[s], ss...)
	}
	return assignments(m)
}

// Epochs returns the sealed epochs not yet confirmed, ascending.
func (t *Tracker) Epochs() []Epoch {
	out := make([]Epoch, len(t.epochs))
	for i, e := range t.epochs {
		out[i] = Epoch{Checkpoint: e.Checkpoint, Assignments: slices.Clone(e.Assignments)}
	}
	return out
}

func splitIDs(ss []Split) []string {
	out := make([]string, len(ss))
	for i, s := range ss {
		out[i] = s.ID
	}
	return out
}
