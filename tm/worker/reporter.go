package worker

import (
	"errors"
	"sync"

	"github.com/tidestream/tide/rpc"
	"github.com/tidestream/tide/tm/exec"
)

var errSessionClosed = errors.New("AM session closed")

// relay forwards the executor's reports to the AM (it implements exec.Reporter), turning
// the TaskManager's attempt ids back into the AM's attempt numbers. It outlives AM
// sessions: while the AM is away, and for subtasks a new AM has not adopted yet, nothing
// is queued. What the AM must learn is folded into the task book instead (each subtask's
// latest state, its readers' pending split requests and received splits) and sent once the
// new AM adopts the subtasks; acknowledgements of checkpoints the lost AM triggered are
// dropped (the new AM aborts those checkpoints and never reuses their ids).
type relay struct {
	mu   sync.Mutex
	sess *amSession // nil while the AM is away
	book *taskBook
	// held are attempts reported to the current AM and not yet adopted (by local id).
	held map[int64]bool
}

var _ exec.Reporter = (*relay)(nil)

func newRelay() *relay { return &relay{book: newTaskBook(), held: map[int64]bool{}} }

// attach starts a session with a new AM: every attempt in the book is held until the AM
// adopts or cancels it.
func (r *relay) attach(s *amSession) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.sess = s
	r.held = map[int64]bool{}
	for id := range r.book.attempts {
		r.held[id] = true
	}
}

// detach ends the session (the AM is lost).
func (r *relay) detach() {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.sess = nil
}

// forward reports whether messages of attempt go to the AM now (mu held).
func (r *relay) forward(attempt int64) bool { return r.sess != nil && !r.held[attempt] }

func (r *relay) sendLocked(msg *rpc.TaskManagerMessage) {
	if r.sess != nil {
		_ = r.sess.send(msg)
	}
}

func amNumber(attempt int64) int64 { return attempt & 0xffffffff }

func (r *relay) TaskState(attempt int64, vertex string, index int, state string, err error, unrecoverable bool) {
	msg := ""
	if err != nil {
		msg = err.Error()
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if t := r.book.task(attempt, vertex, index); t != nil {
		t.state = state
	}
	if !r.forward(attempt) {
		return // folded: the book's state goes to the AM on adoption
	}
	r.sendLocked(&rpc.TaskManagerMessage{Kind: &rpc.TaskManagerMessage_TaskState{TaskState: &rpc.TaskStateUpdate{
		Attempt: amNumber(attempt), Vertex: vertex, Index: int32(index), State: state, Error: msg, Unrecoverable: unrecoverable,
		LostPeerTaskManager: exec.LostPeer(err)}}})
}

func (r *relay) CheckpointAck(attempt, checkpointID int64, vertex string, index int, handles []exec.StateHandle) {
	hs := make([]*rpc.StateHandle, 0, len(handles))
	for _, h := range handles {
		hs = append(hs, &rpc.StateHandle{Name: h.Name, Size: h.Size})
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if !r.forward(attempt) {
		return // for a checkpoint of the lost AM: the new one aborts it
	}
	r.sendLocked(&rpc.TaskManagerMessage{Kind: &rpc.TaskManagerMessage_CheckpointAck{CheckpointAck: &rpc.CheckpointAck{
		Attempt: amNumber(attempt), CheckpointId: checkpointID, Vertex: vertex, Index: int32(index), Handles: hs}}})
}

func (r *relay) CheckpointDecline(attempt, checkpointID int64, vertex string, index int, reason string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if !r.forward(attempt) {
		return
	}
	r.sendLocked(&rpc.TaskManagerMessage{Kind: &rpc.TaskManagerMessage_CheckpointDecline{CheckpointDecline: &rpc.CheckpointDecline{
		Attempt: amNumber(attempt), CheckpointId: checkpointID, Vertex: vertex, Index: int32(index), Reason: reason}}})
}

func (r *relay) RequestSplit(attempt int64, vertex string, index int, ahead bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if t := r.book.task(attempt, vertex, index); t != nil {
		t.awaitingSplit, t.awaitingAhead = true, ahead
	}
	if !r.forward(attempt) {
		return // sent again on adoption
	}
	r.sendLocked(splitRequestMsg(attempt, vertex, index, ahead))
}

func (r *relay) InputEnded(attempt int64, vertex string, index int) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if !r.forward(attempt) {
		return // a new AM triggers the final checkpoint at its interval
	}
	r.sendLocked(&rpc.TaskManagerMessage{Kind: &rpc.TaskManagerMessage_InputEnded{InputEnded: &rpc.PerfInputEnded{
		Attempt: amNumber(attempt), Vertex: vertex, Index: int32(index)}}})
}

func splitRequestMsg(attempt int64, vertex string, index int, ahead bool) *rpc.TaskManagerMessage {
	return &rpc.TaskManagerMessage{Kind: &rpc.TaskManagerMessage_SplitRequest{SplitRequest: &rpc.SplitRequest{
		Attempt: amNumber(attempt), Vertex: vertex, Index: int32(index), Ahead: ahead}}}
}

// adopted releases a held attempt: the AM gets every subtask's current state and the split
// requests still waiting for an answer.
func (r *relay) adopted(attempt int64) {
	r.mu.Lock()
	defer r.mu.Unlock()
	delete(r.held, attempt)
	a := r.book.attempts[attempt]
	if a == nil {
		return
	}
	keys := make([]subtaskKey, 0, len(a.tasks))
	for k := range a.tasks {
		keys = append(keys, k)
	}
	for _, k := range keys {
		t := a.tasks[k]
		r.sendLocked(&rpc.TaskManagerMessage{Kind: &rpc.TaskManagerMessage_TaskState{TaskState: &rpc.TaskStateUpdate{
			Attempt: amNumber(attempt), Vertex: k.vertex, Index: int32(k.index), State: t.state}}})
	}
	for _, k := range keys {
		if t := a.tasks[k]; t.awaitingSplit {
			r.sendLocked(splitRequestMsg(attempt, k.vertex, k.index, t.awaitingAhead))
		}
	}
}

// released forgets a cancelled attempt.
func (r *relay) released(attempt int64) {
	r.mu.Lock()
	defer r.mu.Unlock()
	delete(r.held, attempt)
	r.book.forget(attempt)
}

// with runs f on the book under the relay's lock.
func (r *relay) with(f func(b *taskBook)) {
	r.mu.Lock()
	defer r.mu.Unlock()
	f(r.book)
}
