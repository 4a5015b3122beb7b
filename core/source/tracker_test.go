package source

import (
	"errors"
	"fmt"
	"slices"
	"testing"
)

func splits(ids ...string) []Split {
	out := make([]Split, len(ids))
	for i, id := range ids {
		out[i] = Split{ID: id, Data: []byte("data-" + id)}
	}
	return out
}

func ids(ss []Split) []string {
	out := []string{}
	for _, s := range ss {
		out = append(out, s.ID)
	}
	return out
}

func register(t *testing.T, tr *Tracker, subtasks ...int) {
	t.Helper()
	for _, s := range subtasks {
		if _, err := tr.RegisterReader(s, 0); err != nil {
			t.Fatal(err)
		}
	}
}

func assign(t *testing.T, tr *Tracker, subtask int, splitIDs ...string) {
	t.Helper()
	if err := tr.Assign(Assignment{Subtask: subtask, Splits: splits(splitIDs...)}); err != nil {
		t.Fatal(err)
	}
}

// A.11 #9: assignments accumulate per subtask in insertion order.
func TestAssignmentsAccumulateInOrder(t *testing.T) {
	tr := NewTracker()
	register(t, tr, 0, 1, 2)
	// round-robin of 0..5 over 3 readers, then of 6..8 with 2 per reader from subtask 1
	if err := tr.Assign(
		Assignment{0, splits("0")}, Assignment{1, splits("1", "2")}, Assignment{2, splits("3", "4", "5")},
	); err != nil {
		t.Fatal(err)
	}
	if err := tr.Assign(Assignment{0, splits("6")}, Assignment{1, splits("7", "8")}); err != nil {
		t.Fatal(err)
	}
	want := map[int][]string{0: {"0", "6"}, 1: {"1", "2", "7", "8"}, 2: {"3", "4", "5"}}
	got := tr.Uncheckpointed()
	if len(got) != 3 {
		t.Fatalf("Uncheckpointed = %+v", got)
	}
	for _, a := range got {
		if !slices.Equal(ids(a.Splits), want[a.Subtask]) {
			t.Errorf("subtask %d: %v, want %v", a.Subtask, ids(a.Splits), want[a.Subtask])
		}
	}
}

// A.11 #10: a snapshot moves the current epoch under its checkpoint; completion drops
// epochs up to it and keeps later ones.
func TestSnapshotAndComplete(t *testing.T) {
	tr := NewTracker()
	register(t, tr, 0, 1)
	assign(t, tr, 0, "a")
	if err := tr.SnapshotState(1); err != nil {
		t.Fatal(err)
	}
	assign(t, tr, 1, "b")
	if err := tr.SnapshotState(2); err != nil {
		t.Fatal(err)
	}
	if err := tr.SnapshotState(2); !errors.Is(err, ErrCheckpointOrder) {
		t.Fatalf("repeated snapshot id = %v", err)
	}
	if ep := tr.Epochs(); len(ep) != 2 || ep[0].Checkpoint != 1 || ep[1].Checkpoint != 2 {
		t.Fatalf("Epochs = %+v", ep)
	}
	tr.OnCheckpointComplete(1)
	ep := tr.Epochs()
	if len(ep) != 1 || ep[0].Checkpoint != 2 || !slices.Equal(ids(ep[0].Assignments[0].Splits), []string{"b"}) {
		t.Fatalf("Epochs after completing 1 = %+v", ep)
	}
	if tr.LastCompleted() != 1 {
		t.Fatalf("LastCompleted = %d", tr.LastCompleted())
	}
}

// A.11 #6, #7, #11: what a failed reader gives back.
func TestReaderFailureReturnsUncheckpointedSplits(t *testing.T) {
	tests := []struct {
		name      string
		complete  int64 // checkpoint completed before the failure (0: none)
		restored  int64 // for ReaderReset; 0 uses ReaderFailed
		want      []string
		wantOther []string // what subtask 1 still has outstanding
	}{
		{"no completed checkpoint: both epochs and the current one", 0, 0, []string{"0", "1", "2", "5"}, []string{"3", "4"}},
		{"after completing 100: only later assignments", 100, 0, []string{"2", "5"}, []string{"4"}},
		{"after completing 101: only the current epoch", 101, 0, []string{"5"}, []string{}},
		{"reset to an explicit older checkpoint", 0, 100, []string{"2", "5"}, []string{"3", "4"}},
		{"reset with no checkpoint", 0, NoCheckpoint, []string{"0", "1", "2", "5"}, []string{"3", "4"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tr := NewTracker()
			register(t, tr, 0, 1)
			assign(t, tr, 0, "0", "1")
			assign(t, tr, 1, "3")
			tr.SnapshotState(100)
			assign(t, tr, 0, "2")
			assign(t, tr, 1, "4")
			tr.SnapshotState(101)
			assign(t, tr, 0, "5")
			tr.SignalNoMoreSplits(0)
			if tt.complete > 0 {
				tr.OnCheckpointComplete(tt.complete)
			}
			tr.UnregisterReader(0, 0)
			var got []Split
			if tt.restored != 0 {
				got = tr.ReaderReset(0, tt.restored)
			} else {
				got = tr.ReaderFailed(0)
			}
			if !slices.Equal(ids(got), tt.want) {
				t.Errorf("returned %v, want %v", ids(got), tt.want)
			}
			if tr.IsRegistered(0) || tr.HasNoMoreSplits(0) {
				t.Errorf("subtask 0 still registered (%v) or flagged no-more-splits (%v)", tr.IsRegistered(0), tr.HasNoMoreSplits(0))
			}
			again := tr.ReaderFailed(0)
			if tt.restored != 0 {
				again = tr.ReaderReset(0, tt.restored)
			}
			if len(again) != 0 {
				t.Errorf("second failure returned %v, want nothing", ids(again))
			}
			other := []string{}
			for _, a := range tr.Uncheckpointed() {
				if a.Subtask == 1 {
					other = ids(a.Splits)
				}
			}
			if !slices.Equal(other, tt.wantOther) {
				t.Errorf("subtask 1 outstanding %v, want %v", other, tt.wantOther)
			}
		})
	}
}

// A.11 #8: after a reset the subtask can register again, receive the same splits and
// be told again that there are no more.
func TestRestartAndRequestAgain(t *testing.T) {
	tr := NewTracker()
	if first, err := tr.RegisterReader(0, 0); err != nil || !first {
		t.Fatalf("RegisterReader = %v, %v", first, err)
	}
	assign(t, tr, 0, "s0")
	assign(t, tr, 0, "s1")
	tr.SignalNoMoreSplits(0)
	back := tr.ReaderFailed(0)
	if !slices.Equal(ids(back), []string{"s0", "s1"}) || tr.HasNoMoreSplits(0) {
		t.Fatalf("back = %v, noMoreSplits = %v", ids(back), tr.HasNoMoreSplits(0))
	}
	if first, err := tr.RegisterReader(0, 1); err != nil || !first {
		t.Fatalf("re-register = %v, %v", first, err)
	}
	if err := tr.Assign(Assignment{0, back}); err != nil {
		t.Fatal(err)
	}
	tr.SignalNoMoreSplits(0)
	if !tr.HasNoMoreSplits(0) || !slices.Equal(ids(tr.Uncheckpointed()[0].Splits), []string{"s0", "s1"}) {
		t.Fatalf("after reassigning: %+v", tr.Uncheckpointed())
	}
}

// A.11 #12, #13: registration, unregistration, assignment to unregistered readers.
func TestRegistration(t *testing.T) {
	tr := NewTracker()
	steps := []struct {
		op        string
		subtask   int
		attempt   int64
		wantFirst bool
		wantErr   error
	}{
		{"register", 0, 0, true, nil},
		{"register", 0, 1, false, nil}, // a second attempt (speculative): not first
		{"register", 0, 1, false, ErrAlreadyRegistered},
		{"register", 1, 0, true, nil},
		{"register", -1, 0, false, ErrInvalidSplit},
		{"unregister", 0, 0, false, nil},
		{"unregister", 5, 0, false, nil}, // unknown: no-op
		{"assign", 2, 0, false, ErrNotRegistered},
		{"assign", 0, 0, false, nil},
	}
	for i, s := range steps {
		var err error
		var first bool
		switch s.op {
		case "register":
			first, err = tr.RegisterReader(s.subtask, s.attempt)
		case "unregister":
			tr.UnregisterReader(s.subtask, s.attempt)
		case "assign":
			err = tr.Assign(Assignment{s.subtask, splits(fmt.Sprint("x", i))})
		}
		if first != s.wantFirst || !errors.Is(err, s.wantErr) || (s.wantErr == nil && err != nil) {
			t.Fatalf("step %d %s(%d,%d) = %v, %v; want %v, %v", i, s.op, s.subtask, s.attempt, first, err, s.wantFirst, s.wantErr)
		}
	}
	if got := tr.Readers(); !slices.Equal(got, []Reader{{0, 1}, {1, 0}}) {
		t.Fatalf("Readers = %v", got)
	}
	if err := tr.Assign(Assignment{0, []Split{{ID: ""}}}); !errors.Is(err, ErrInvalidSplit) {
		t.Fatalf("Assign without id = %v", err)
	}
	// A failed multi-target assignment records nothing.
	before := tr.Seq()
	if err := tr.Assign(Assignment{0, splits("y")}, Assignment{9, splits("z")}); !errors.Is(err, ErrNotRegistered) {
		t.Fatalf("Assign to unregistered = %v", err)
	}
	if tr.Seq() != before || len(tr.Uncheckpointed()[0].Splits) != 1 {
		t.Fatalf("a refused assignment was recorded: seq %d→%d, %+v", before, tr.Seq(), tr.Uncheckpointed())
	}
}
