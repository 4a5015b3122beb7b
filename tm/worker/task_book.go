package worker

import (
	"slices"
	"sort"

	"github.com/tidestream/tide/rpc"
	"github.com/tidestream/tide/tm/exec"
)

// taskBook is what a TaskManager knows of the subtasks it runs, kept so that it can tell
// a new AM after an AM failover: per attempt, each subtask's slot, key groups and latest
// state, the split requests its readers are waiting on, and the splits they received
// since the last checkpoint they were told completed. Its size is bounded by the subtasks
// deployed here (nothing is queued per message). Not safe for concurrent use: the relay's
// mutex guards it.
type taskBook struct {
	attempts map[int64]*bookAttempt // by the TaskManager's (local) attempt id
	// highestCheckpoint is the highest checkpoint id any AM triggered here.
	highestCheckpoint int64
}

type bookAttempt struct {
	run      string
	amNumber int64 // the attempt number of the AM that deployed it
	tasks    map[subtaskKey]*bookTask
}

type subtaskKey struct {
	vertex string
	index  int
}

type bookTask struct {
	slot          int
	kgStart       int
	kgEnd         int
	hasKeyGroups  bool
	state         string
	awaitingSplit bool // a split request is unanswered
	awaitingAhead bool // ... and was made ahead
	// received are split ids since the last completed checkpoint; marks[n] is how many of
	// them had arrived when checkpoint n was triggered.
	received []string
	marks    map[int64]int
}

func newTaskBook() *taskBook { return &taskBook{attempts: map[int64]*bookAttempt{}} }

// deployed records the subtasks of spec that run here (spec.Attempt is the local id).
func (b *taskBook) deployed(spec exec.DeploySpec, amNumber int64) {
	a := &bookAttempt{run: spec.RunID, amNumber: amNumber, tasks: map[subtaskKey]*bookTask{}}
	for _, st := range spec.Subtasks {
		t := &bookTask{slot: st.Slot, state: "DEPLOYING", marks: map[int64]int{}}
		for _, v := range spec.Vertices {
			if v.Vertex == st.Vertex && st.Index < len(v.KeyGroupStart) && st.Index < len(v.KeyGroupEnd) {
				t.kgStart, t.kgEnd, t.hasKeyGroups = v.KeyGroupStart[st.Index], v.KeyGroupEnd[st.Index], true
			}
		}
		a.tasks[subtaskKey{st.Vertex, st.Index}] = t
	}
	b.attempts[spec.Attempt] = a
}

func (b *taskBook) task(attempt int64, vertex string, index int) *bookTask {
	if a := b.attempts[attempt]; a != nil {
		return a.tasks[subtaskKey{vertex, index}]
	}
	return nil
}

func (b *taskBook) forget(attempt int64) { delete(b.attempts, attempt) }

func (b *taskBook) triggered(attempt, checkpoint int64) {
	b.highestCheckpoint = max(b.highestCheckpoint, checkpoint)
	if a := b.attempts[attempt]; a != nil {
		for _, t := range a.tasks {
			t.marks[checkpoint] = len(t.received)
		}
	}
}

// completed drops the splits received before checkpoint's trigger: they are in the
// readers' checkpointed state now.
func (b *taskBook) completed(attempt, checkpoint int64) {
	a := b.attempts[attempt]
	if a == nil {
		return
	}
	for _, t := range a.tasks {
		n, ok := t.marks[checkpoint]
		if !ok {
			continue
		}
		t.received = slices.Delete(t.received, 0, n)
		for id, m := range t.marks {
			if id <= checkpoint {
				delete(t.marks, id)
			} else {
				t.marks[id] = max(0, m-n)
			}
		}
	}
}

func (b *taskBook) splits(attempt int64, vertex string, index int, ids []string, noMore bool) {
	if t := b.task(attempt, vertex, index); t != nil {
		t.received = append(t.received, ids...)
		if len(ids) > 0 || noMore || t.awaitingAhead {
			t.awaitingSplit = false // an answer of no splits is to a request made ahead
		}
	}
}

// report lists every subtask of every live attempt, for Register after an AM failover.
func (b *taskBook) report() []*rpc.FailoverTask {
	var out []*rpc.FailoverTask
	for _, a := range b.attempts {
		for k, t := range a.tasks {
			out = append(out, &rpc.FailoverTask{Vertex: k.vertex, Index: int32(k.index), Attempt: a.amNumber, RunId: a.run,
				Slot: int32(t.slot), State: t.state, KeyGroupStart: int32(t.kgStart), KeyGroupEnd: int32(t.kgEnd),
				HasKeyGroups: t.hasKeyGroups, ReceivedSplits: slices.Clone(t.received)})
		}
	}
	sort.Slice(out, func(i, j int) bool {
		if out[i].Vertex != out[j].Vertex {
			return out[i].Vertex < out[j].Vertex
		}
		return out[i].Index < out[j].Index
	})
	return out
}
