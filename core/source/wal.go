package source

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"slices"
	"strings"
)

// EntryVersion is the version of the log entry format.
const EntryVersion = 1

// ErrBadEntry is wrapped by every error decoding or replaying a log entry.
var ErrBadEntry = errors.New("invalid split assignment log entry")

// Kind says what a log entry records.
type Kind string

const (
	KindRegister     Kind = "register"       // Subtask, Attempt
	KindUnregister   Kind = "unregister"     // Subtask, Attempt
	KindAssign       Kind = "assign"         // Assignments
	KindNoMoreSplits Kind = "no-more-splits" // Subtask
	KindSnapshot     Kind = "snapshot"       // Checkpoint
	KindComplete     Kind = "complete"       // Checkpoint
	KindReset        Kind = "reset"          // Subtask, Checkpoint (the restored one)
	KindState        Kind = "state"          // State: replaces everything before it
)

// Entry is one record of the write-ahead log. Seq increases by one per entry.
type Entry struct {
	Version     int          `json:"v"`
	Seq         uint64       `json:"seq"`
	Kind        Kind         `json:"kind"`
	Subtask     int          `json:"subtask"`
	Attempt     int64        `json:"attempt,omitempty"`
	Checkpoint  int64        `json:"checkpoint,omitempty"`
	Assignments []Assignment `json:"assignments,omitempty"`
	State       *State       `json:"state,omitempty"`
}

// State is the whole tracker, for a compacted log.
type State struct {
	Readers        []Reader     `json:"readers"`
	Epochs         []Epoch      `json:"epochs"`
	Uncheckpointed []Assignment `json:"uncheckpointed"`
	NoMoreSplits   []int        `json:"noMoreSplits"`
	LastSnapshot   int64        `json:"lastSnapshot"`
	LastComplete   int64        `json:"lastComplete"`
}

func (t *Tracker) record(e Entry) {
	t.seq++
	e.Version = EntryVersion
	e.Seq = t.seq
	t.log = append(t.log, e)
}

// TakeLog returns the entries recorded since the last call. The AM appends them to the
// log in storage before it sends the matching events to readers.
func (t *Tracker) TakeLog() []Entry {
	out := t.log
	t.log = nil
	return out
}

// Seq is the sequence number of the newest entry.
func (t *Tracker) Seq() uint64 { return t.seq }

// Compact returns one KindState entry carrying the whole current state, numbered with
// the current sequence number: a log that starts with it and continues with later
// entries replays to the same tracker.
func (t *Tracker) Compact() Entry {
	st := &State{
		Readers:        t.Readers(),
		Epochs:         t.Epochs(),
		Uncheckpointed: assignments(t.current),
		NoMoreSplits:   slices.Sorted(maps.Keys(t.noMoreSplits)),
		LastSnapshot:   t.lastSnapshot,
		LastComplete:   t.lastComplete,
	}
	if st.Readers == nil {
		st.Readers = []Reader{}
	}
	return Entry{Version: EntryVersion, Seq: t.seq, Kind: KindState, State: st}
}

// Replay rebuilds a tracker from a log: entries in order, sequence numbers increasing by
// one (a KindState entry may start the log at any number). The result has an empty
// TakeLog and continues numbering after the last entry.
func Replay(entries []Entry) (*Tracker, error) {
	t := NewTracker()
	for i, e := range entries {
		if err := e.Validate(); err != nil {
			return nil, fmt.Errorf("replay entry %d: %w", i, err)
		}
		if e.Kind == KindState {
			if i > 0 && e.Seq < t.seq {
				return nil, fmt.Errorf("replay entry %d: %w: state seq %d before seq %d", i, ErrBadEntry, e.Seq, t.seq)
			}
			t = fromState(e.State)
			t.seq = e.Seq
			continue
		}
		if (i > 0 || e.Seq != 1) && e.Seq != t.seq+1 {
			return nil, fmt.Errorf("replay entry %d: %w: seq %d, expected %d", i, ErrBadEntry, e.Seq, t.seq+1)
		}
		if err := t.apply(e); err != nil {
			return nil, fmt.Errorf("replay entry %d (seq %d): %w", i, e.Seq, err)
		}
		t.seq = e.Seq
	}
	return t, nil
}

func (t *Tracker) apply(e Entry) error {
	switch e.Kind {
	case KindRegister:
		if t.readers[e.Subtask][e.Attempt] {
			return fmt.Errorf("%w: reader %d attempt %d registered twice", ErrBadEntry, e.Subtask, e.Attempt)
		}
		t.applyRegister(e.Subtask, e.Attempt)
	case KindUnregister:
		t.applyUnregister(e.Subtask, e.Attempt)
	case KindAssign:
		for _, a := range e.Assignments {
			if !t.IsRegistered(a.Subtask) {
				return fmt.Errorf("%w: assignment to subtask %d, which is not registered", ErrBadEntry, a.Subtask)
			}
		}
		t.applyAssign(e.Assignments)
	case KindNoMoreSplits:
		t.noMoreSplits[e.Subtask] = true
	case KindSnapshot:
		if e.Checkpoint <= t.lastSnapshot {
			return fmt.Errorf("%w: snapshot %d after snapshot %d", ErrBadEntry, e.Checkpoint, t.lastSnapshot)
		}
		t.applySnapshot(e.Checkpoint)
	case KindComplete:
		t.applyComplete(e.Checkpoint)
	case KindReset:
		t.applyReset(e.Subtask, e.Checkpoint)
	}
	return nil
}

func fromState(st *State) *Tracker {
	t := NewTracker()
	for _, r := range st.Readers {
		t.applyRegister(r.Subtask, r.Attempt)
	}
	for _, e := range st.Epochs {
		if len(e.Assignments) == 0 {
			continue
		}
		t.epochs = append(t.epochs, Epoch{Checkpoint: e.Checkpoint, Assignments: assignments(toMap(e.Assignments))})
	}
	t.current = toMap(st.Uncheckpointed)
	for _, s := range st.NoMoreSplits {
		t.noMoreSplits[s] = true
	}
	t.lastSnapshot, t.lastComplete = st.LastSnapshot, st.LastComplete
	return t
}

func toMap(as []Assignment) map[int][]Split {
	m := map[int][]Split{}
	for _, a := range as {
		m[a.Subtask] = append(m[a.Subtask], cloneSplits(a.Splits)...)
	}
	return m
}

// Validate checks one entry on its own.
func (e Entry) Validate() error {
	var probs []string
	add := func(format string, args ...any) { probs = append(probs, fmt.Sprintf(format, args...)) }
	if e.Version != EntryVersion {
		add("version %d: this build reads version %d", e.Version, EntryVersion)
	}
	if e.Seq == 0 && e.Kind != KindState {
		add("seq 0: expected ≥ 1")
	}
	if e.Subtask < 0 {
		add("subtask %d: expected ≥ 0", e.Subtask)
	}
	checkAssignments := func(what string, as []Assignment) {
		seen := map[int]bool{}
		for _, a := range as {
			if a.Subtask < 0 {
				add("%s: subtask %d: expected ≥ 0", what, a.Subtask)
			}
			if seen[a.Subtask] {
				add("%s: subtask %d listed twice", what, a.Subtask)
			}
			seen[a.Subtask] = true
			for _, s := range a.Splits {
				if s.ID == "" {
					add("%s: split without id for subtask %d", what, a.Subtask)
				}
			}
		}
	}
	switch e.Kind {
	case KindRegister, KindUnregister, KindNoMoreSplits:
	case KindAssign:
		if len(e.Assignments) == 0 {
			add("assign entry without assignments")
		}
		checkAssignments("assign", e.Assignments)
	case KindSnapshot, KindComplete:
		if e.Checkpoint < 1 {
			add("%s checkpoint %d: expected ≥ 1", e.Kind, e.Checkpoint)
		}
	case KindReset:
		if e.Checkpoint < NoCheckpoint || e.Checkpoint == 0 {
			add("reset to checkpoint %d: expected %d or ≥ 1", e.Checkpoint, NoCheckpoint)
		}
	case KindState:
		if e.State == nil {
			add("state entry without state")
			break
		}
		st := e.State
		last := st.LastComplete
		for _, ep := range st.Epochs {
			if ep.Checkpoint <= last || ep.Checkpoint > st.LastSnapshot {
				add("state: epoch %d outside (%d, %d]", ep.Checkpoint, last, st.LastSnapshot)
			}
			last = ep.Checkpoint
			checkAssignments(fmt.Sprintf("state epoch %d", ep.Checkpoint), ep.Assignments)
		}
		checkAssignments("state uncheckpointed", st.Uncheckpointed)
		for _, r := range st.Readers {
			if r.Subtask < 0 {
				add("state: reader subtask %d: expected ≥ 0", r.Subtask)
			}
		}
		if st.LastSnapshot < NoCheckpoint || st.LastSnapshot == 0 || st.LastComplete < NoCheckpoint || st.LastComplete == 0 {
			add("state: lastSnapshot %d / lastComplete %d: expected %d or ≥ 1", st.LastSnapshot, st.LastComplete, NoCheckpoint)
		}
	default:
		add("unknown kind %q", e.Kind)
	}
	if e.Kind != KindAssign && len(e.Assignments) > 0 {
		add("%s entry with assignments", e.Kind)
	}
	if e.Kind != KindState && e.State != nil {
		add("%s entry with state", e.Kind)
	}
	if len(probs) > 0 {
		return fmt.Errorf("%w (seq %d, kind %q): %s", ErrBadEntry, e.Seq, e.Kind, strings.Join(probs, "; "))
	}
	return nil
}

// EncodeEntry encodes e as one line of JSON (newline-terminated).
func EncodeEntry(e Entry) ([]byte, error) {
	if err := e.Validate(); err != nil {
		return nil, err
	}
	b, err := json.Marshal(e)
	if err != nil {
		return nil, fmt.Errorf("encode log entry seq %d: %w", e.Seq, err)
	}
	return append(b, '\n'), nil
}

// DecodeEntry parses one line written by EncodeEntry; unknown fields, trailing data and
// invalid content are errors wrapping ErrBadEntry.
func DecodeEntry(line []byte) (Entry, error) {
	dec := json.NewDecoder(bytes.NewReader(line))
	dec.DisallowUnknownFields()
	var e Entry
	if err := dec.Decode(&e); err != nil {
		return Entry{}, fmt.Errorf("%w: %v", ErrBadEntry, err)
	}
	if _, err := dec.Token(); !errors.Is(err, io.EOF) {
		return Entry{}, fmt.Errorf("%w: trailing data after the entry", ErrBadEntry)
	}
	if err := e.Validate(); err != nil {
		return Entry{}, err
	}
	return e, nil
}

// DecodeLog parses a whole log file (one entry per line, blank lines ignored). A
// truncated last line, the trace of a crash mid-append, is dropped and reported by
// truncated; any other bad line is an error naming its line number.
func DecodeLog(data []byte) (entries []Entry, truncated bool, err error) {
	lines := bytes.Split(data, []byte("\n"))
	for i, line := range lines {
		if len(bytes.TrimSpace(line)) == 0 {
			continue
		}
		e, derr := DecodeEntry(line)
		if derr != nil {
			if i == len(lines)-1 {
				return entries, true, nil
			}
			return nil, false, fmt.Errorf("split assignment log line %d: %w", i+1, derr)
		}
		entries = append(entries, e)
	}
	return entries, false, nil
}
