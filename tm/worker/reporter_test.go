package worker

import (
	"slices"
	"sync"
	"testing"

	"github.com/tidestream/tide/rpc"
	"github.com/tidestream/tide/tm/exec"
)

// captureStream records what a session sends.
type captureStream struct {
	rpc.JobManager_ConnectClient
	mu   sync.Mutex
	sent []*rpc.TaskManagerMessage
}

func (c *captureStream) Send(m *rpc.TaskManagerMessage) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.sent = append(c.sent, m)
	return nil
}

func (c *captureStream) CloseSend() error { return nil }

func (c *captureStream) kinds() []string {
	c.mu.Lock()
	defer c.mu.Unlock()
	var out []string
	for _, m := range c.sent {
		switch k := m.GetKind().(type) {
		case *rpc.TaskManagerMessage_TaskState:
			out = append(out, "state "+k.TaskState.GetVertex()+" "+k.TaskState.GetState())
		case *rpc.TaskManagerMessage_SplitRequest:
			out = append(out, "split-request "+k.SplitRequest.GetVertex())
		case *rpc.TaskManagerMessage_CheckpointAck:
			out = append(out, "ack")
		}
	}
	return out
}

// While the AM is away and until the next AM adopts the attempt, nothing is sent and
// nothing queues: the book keeps each subtask's latest state and its pending split
// request; acknowledgements are dropped. Adoption sends the states and the requests.
func TestRelayHoldsWhileAwayAndFlushesOnAdoption(t *testing.T) {
	r := newRelay()
	space := newAttemptSpace("run-1")
	id := space.local(4)
	spec := exec.DeploySpec{Attempt: id, RunID: "run-1",
		Vertices: []exec.VertexParallelism{{Vertex: "src", Parallelism: 1, MaxParallelism: 8, KeyGroupStart: []int{0}, KeyGroupEnd: []int{7}},
			{Vertex: "sink", Parallelism: 1, MaxParallelism: 8}},
		Subtasks: []exec.Subtask{{Vertex: "src", Index: 0, Slot: 0}, {Vertex: "sink", Index: 0, Slot: 0}}}
	r.with(func(b *taskBook) { b.deployed(spec, 4) })
	first := &captureStream{}
	r.attach(&amSession{stream: first})
	r.adopted(id) // the AM that deployed it: nothing held
	r.TaskState(id, "src", 0, "RUNNING", nil, false)
	r.detach()
	for range 1000 { // the AM is away: nothing is queued
		r.RequestSplit(id, "src", 0, false)
		r.CheckpointAck(id, 9, "sink", 0, nil)
	}
	r.TaskState(id, "sink", 0, "RUNNING", nil, false)
	r.with(func(b *taskBook) {
		b.splits(id, "src", 0, []string{"s1"}, false)
		b.triggered(id, 9)
	})
	second := &captureStream{}
	r.attach(&amSession{stream: second})
	r.RequestSplit(id, "src", 0, false) // held until adopted
	var report []*rpc.FailoverTask
	var highest int64
	r.with(func(b *taskBook) { report, highest = b.report(), b.highestCheckpoint })
	if len(report) != 2 || highest != 9 {
		t.Fatalf("report %v highest %d, want 2 subtasks and checkpoint 9", report, highest)
	}
	src := report[slices.IndexFunc(report, func(f *rpc.FailoverTask) bool { return f.GetVertex() == "src" })]
	if src.GetAttempt() != 4 || src.GetRunId() != "run-1" || !src.GetHasKeyGroups() || src.GetKeyGroupEnd() != 7 ||
		!slices.Equal(src.GetReceivedSplits(), []string{"s1"}) || src.GetState() != "RUNNING" {
		t.Fatalf("src report = %v", src)
	}
	if got := second.kinds(); len(got) != 0 {
		t.Fatalf("sent before adoption: %v", got)
	}
	r.adopted(id)
	got := second.kinds()
	slices.Sort(got)
	want := []string{"split-request src", "state sink RUNNING", "state src RUNNING"}
	if !slices.Equal(got, want) {
		t.Fatalf("sent on adoption %v, want %v", got, want)
	}
	r.CheckpointAck(id, 10, "sink", 0, nil)
	if got := second.kinds(); got[len(got)-1] != "ack" {
		t.Fatalf("after adoption an ack is sent at once; sent %v", got)
	}
}

// A completed checkpoint drops the splits received before its trigger from the report.
func TestTaskBookReceivedSplitsSinceCompletedCheckpoint(t *testing.T) {
	b := newTaskBook()
	b.deployed(exec.DeploySpec{Attempt: 1, Subtasks: []exec.Subtask{{Vertex: "src"}}}, 1)
	b.splits(1, "src", 0, []string{"a", "b"}, false)
	b.triggered(1, 5)
	b.splits(1, "src", 0, []string{"c"}, false)
	b.triggered(1, 6)
	b.splits(1, "src", 0, []string{"d"}, false)
	b.completed(1, 5)
	if got := b.report()[0].GetReceivedSplits(); !slices.Equal(got, []string{"c", "d"}) {
		t.Fatalf("after checkpoint 5: %v, want [c d]", got)
	}
	b.completed(1, 6)
	if got := b.report()[0].GetReceivedSplits(); !slices.Equal(got, []string{"d"}) {
		t.Fatalf("after checkpoint 6: %v, want [d]", got)
	}
}

// An answer of no splits answers a request made ahead (the AM keeps the split back), not
// one from a reader with nothing to read (the AM holds that until it has splits). The book
// keeps an unanswered request, and its kind, for an AM that adopts the attempt.
func TestTaskBookSplitRequestAnswered(t *testing.T) {
	for _, tc := range []struct {
		name     string
		ahead    bool
		ids      []string
		noMore   bool
		awaiting bool
	}{
		{"idle/splits", false, []string{"a"}, false, false},
		{"idle/no more", false, nil, true, false},
		{"idle/none", false, nil, false, true},
		{"ahead/splits", true, []string{"a"}, false, false},
		{"ahead/none", true, nil, false, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := newRelay()
			spec := exec.DeploySpec{Attempt: 1, Subtasks: []exec.Subtask{{Vertex: "src"}}}
			r.with(func(b *taskBook) { b.deployed(spec, 1) })
			r.RequestSplit(1, "src", 0, tc.ahead) // no AM: held
			r.with(func(b *taskBook) { b.splits(1, "src", 0, tc.ids, tc.noMore) })
			var awaiting, ahead bool
			r.with(func(b *taskBook) {
				bt := b.task(1, "src", 0)
				awaiting, ahead = bt.awaitingSplit, bt.awaitingAhead
			})
			if awaiting != tc.awaiting || ahead != tc.ahead {
				t.Fatalf("awaiting %v (ahead %v), want %v (%v)", awaiting, ahead, tc.awaiting, tc.ahead)
			}
		})
	}
	if m := splitRequestMsg(1, "src", 0, true).GetSplitRequest(); !m.GetAhead() {
		t.Fatalf("split request %v lost that it was made ahead", m)
	}
}
