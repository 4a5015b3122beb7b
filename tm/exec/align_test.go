package exec

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/tidestream/tide/core"
	"github.com/tidestream/tide/storage"
	"github.com/tidestream/tide/stream"
	"github.com/tidestream/tide/tm/netplane"
	"github.com/tidestream/tide/tm/snapshot"
)

func TestAligner(t *testing.T) {
	type op struct {
		close  bool
		input  int
		id     int64
		want   alignStep
		ending int64 // aligning() afterwards
	}
	tests := []struct {
		name string
		n    int
		ops  []op
	}{
		{"barrier on one input blocks until the other delivers it", 2, []op{
			{input: 0, id: 1, want: alignStep{}, ending: 1},
			{input: 1, id: 1, want: alignStep{aligned: 1, ts: 1, resume: []int{0, 1}}},
		}},
		{"end of partition counts as aligned", 2, []op{
			{input: 0, id: 1, want: alignStep{}, ending: 1},
			{close: true, input: 1, want: alignStep{aligned: 1, ts: 1, resume: []int{0}}},
			{input: 0, id: 2, want: alignStep{aligned: 2, ts: 2, resume: []int{0}}},
		}},
		{"an input closed before the barrier", 3, []op{
			{close: true, input: 2, want: alignStep{}},
			{input: 1, id: 4, want: alignStep{}, ending: 4},
			{input: 0, id: 4, want: alignStep{aligned: 4, ts: 4, resume: []int{0, 1}}},
		}},
		{"a newer barrier supersedes the one aligning", 2, []op{
			{input: 0, id: 1, want: alignStep{}, ending: 1},
			{input: 1, id: 2, want: alignStep{superseded: 1, resume: []int{0}}, ending: 2},
			{input: 0, id: 2, want: alignStep{aligned: 2, ts: 2, resume: []int{0, 1}}},
		}},
		{"an older barrier passes at once", 2, []op{
			{input: 0, id: 3, want: alignStep{}, ending: 3},
			{input: 1, id: 2, want: alignStep{resume: []int{1}}, ending: 3},
			{input: 1, id: 3, want: alignStep{aligned: 3, ts: 3, resume: []int{0, 1}}},
		}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			a := newAligner(tc.n)
			for k, o := range tc.ops {
				var got alignStep
				if o.close {
					got = a.close(o.input)
				} else {
					got = a.barrier(o.input, o.id, o.id)
				}
				if fmt.Sprint(got) != fmt.Sprint(o.want) {
					t.Fatalf("step %d: got %+v, want %+v", k, got, o.want)
				}
				if a.aligning() != o.ending {
					t.Fatalf("step %d: aligning %d, want %d", k, a.aligning(), o.ending)
				}
			}
		})
	}
}

// probeLog records what a probe sink processed and what it had processed at each snapshot.
type probeLog struct {
	mu        sync.Mutex
	seen      []int64
	snapshots map[int64][]int64
	more      chan struct{}
}

type probeOp struct {
	stream.BaseOperator
	log *probeLog
}

func (p *probeOp) Process(v any, _ int64, _ stream.Collector) error {
	p.log.mu.Lock()
	p.log.seen = append(p.log.seen, v.(int64))
	p.log.mu.Unlock()
	select {
	case p.log.more <- struct{}{}:
	default:
	}
	return nil
}

func (p *probeOp) Snapshot(id int64, _ stream.StateWriter) error {
	p.log.mu.Lock()
	defer p.log.mu.Unlock()
	p.log.snapshots[id] = slices.Clone(p.log.seen)
	return nil
}

func (l *probeLog) waitSeen(t *testing.T, v int64) {
	t.Helper()
	deadline := time.After(60 * time.Second)
	for {
		l.mu.Lock()
		ok := slices.Contains(l.seen, v)
		l.mu.Unlock()
		if ok {
			return
		}
		select {
		case <-l.more:
		case <-deadline:
			t.Fatalf("timed out waiting for record %d", v)
		}
	}
}

// alignReporter passes acks and task states to the test.
type alignReporter struct {
	acks   chan int64
	states chan string
}

func (r alignReporter) TaskState(_ int64, _ string, _ int, state string, err error, _ bool) {
	if err != nil {
		state += ": " + err.Error()
	}
	r.states <- state
}
func (r alignReporter) CheckpointAck(_, id int64, _ string, _ int, _ []StateHandle) { r.acks <- id }
func (r alignReporter) CheckpointDecline(_, id int64, _ string, _ int, reason string) {
	r.acks <- -id
}
func (alignReporter) RequestSplit(int64, string, int, bool) {}
func (alignReporter) InputEnded(int64, string, int)         {}

func receive[T any](t *testing.T, ch <-chan T, what string) T {
	t.Helper()
	select {
	case v := <-ch:
		return v
	case <-time.After(60 * time.Second):
		t.Fatalf("timed out waiting for %s", what)
		panic("unreachable")
	}
}

// alignExecutor starts an executor of job on a data plane of its own (both closed when the
// test ends) that reports to the returned alignReporter and checkpoints into the returned
// storage; the test deploys it and plays the producers on the plane.
func alignExecutor(t *testing.T, job *stream.Job) (*Executor, *netplane.Plane, alignReporter, storage.Storage) {
	t.Helper()
	ctx := context.Background()
	st, err := storage.Open(ctx, "file://"+t.TempDir(), storage.Options{})
	if err != nil {
		t.Fatal(err)
	}
	quiet := slog.New(slog.NewTextHandler(io.Discard, nil))
	plane, err := netplane.Listen(ctx, "127.0.0.1:0", netplane.Options{FlushInterval: time.Millisecond, Logger: quiet})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { plane.Close() })
	rep := alignReporter{acks: make(chan int64, 16), states: make(chan string, 16)}
	ex := NewExecutor(Config{JobID: "j", Job: job, TaskManagerID: "tm", Storage: st, Plane: plane, Reporter: rep, Logger: quiet})
	t.Cleanup(func() { ex.Close(ctx) })
	return ex, plane, rep, st
}

// TestBarrierAlignmentOverTheDataPlane runs one subtask with two input channels whose
// producers the test plays: records behind a barrier stay unprocessed until the other input
// delivers the same barrier; an input whose producer finished counts as aligned; once every
// producer finished, the subtask takes its final checkpoint on the trigger and finishes when
// it completes.
func TestBarrierAlignmentOverTheDataPlane(t *testing.T) {
	ctx := context.Background()
	log := &probeLog{snapshots: map[int64][]int64{}, more: make(chan struct{}, 1)}
	job := stream.NewJob("align", 2, 0)
	nums := stream.NumberSequenceSource(job, "src", stream.NumberSequence{From: 1, To: 10})
	stream.Sink(stream.Rebalance(nums, "spread").WithParallelism(1), "probe", func() stream.Operator { return &probeOp{log: log} })
	vs, err := job.Vertices()
	if err != nil {
		t.Fatal(err)
	}
	src, dst := vs[0], vs[1]
	ex, plane, rep, st := alignExecutor(t, job)
	err = ex.Deploy(ctx, DeploySpec{Attempt: 1, CheckpointingEnabled: true,
		Vertices:  []VertexParallelism{{Vertex: src.ID, Parallelism: 2, MaxParallelism: 8}, {Vertex: dst.ID, Parallelism: 1, MaxParallelism: 8}},
		Subtasks:  []Subtask{{Vertex: dst.ID}},
		Locations: []Location{{Vertex: src.ID, Index: 0, DataAddress: plane.Addr()}, {Vertex: src.ID, Index: 1, DataAddress: plane.Addr()}, {Vertex: dst.ID, DataAddress: plane.Addr()}},
	})
	if err != nil {
		t.Fatal(err)
	}
	outs := make([]*netplane.Output, 2)
	for j := range outs {
		id := netplane.ChannelID{Attempt: 1, Edge: stream.EdgeName(src.ID, dst.ID), Producer: j}
		if outs[j], err = plane.OpenOutput(ctx, id, plane.Addr()); err != nil {
			t.Fatal(err)
		}
	}
	send := func(j int, msgs ...[]byte) {
		t.Helper()
		for _, m := range msgs {
			if err := outs[j].Write(ctx, m); err != nil {
				t.Fatal(err)
			}
		}
		if err := outs[j].Flush(ctx); err != nil {
			t.Fatal(err)
		}
	}
	rec := func(v int64) []byte { return src.Outputs[0].Append(appendRecordHeader(nil, noTimestamp), v) }
	barrier := func(id int64) []byte { return appendBarrier(nil, id, id) }
	snap := func(id int64) []int64 { // sorted: the two inputs interleave in any order
		log.mu.Lock()
		defer log.mu.Unlock()
		s := slices.Clone(log.snapshots[id])
		slices.Sort(s)
		return s
	}

	send(0, rec(1), barrier(1), rec(2))
	send(1, rec(10))
	log.waitSeen(t, 10)
	send(1, barrier(1))
	if id := receive(t, rep.acks, "ack of checkpoint 1"); id != 1 {
		t.Fatalf("got ack %d, want 1", id)
	}
	if got := snap(1); !slices.Equal(got, []int64{1, 10}) {
		t.Fatalf("checkpoint 1 saw %v, want [1 10]: a record behind the barrier was processed before alignment", got)
	}
	log.waitSeen(t, 2)

	// Input 1 ends its data, then forwards a barrier: end of data alone does not align.
	send(0, barrier(2), rec(3))
	send(1, rec(11), appendEndOfData(nil))
	log.waitSeen(t, 11)
	send(1, barrier(2))
	if id := receive(t, rep.acks, "ack of checkpoint 2"); id != 2 {
		t.Fatalf("got ack %d, want 2", id)
	}
	if got := snap(2); !slices.Equal(got, []int64{1, 2, 10, 11}) {
		t.Fatalf("checkpoint 2 saw %v, want [1 2 10 11]", got)
	}

	// Input 1's producer finishes: end of partition counts as aligned for barrier 3.
	if err := outs[1].Close(ctx); err != nil {
		t.Fatal(err)
	}
	send(0, barrier(3), rec(4))
	if id := receive(t, rep.acks, "ack of checkpoint 3"); id != 3 {
		t.Fatalf("got ack %d, want 3", id)
	}
	if got := snap(3); !slices.Equal(got, []int64{1, 2, 3, 10, 11}) {
		t.Fatalf("checkpoint 3 saw %v, want [1 2 3 10 11]", got)
	}

	// Every producer finishes: no barrier can come, the trigger takes the final checkpoint.
	if err := outs[0].Close(ctx); err != nil {
		t.Fatal(err)
	}
	log.waitSeen(t, 4)
	ex.TriggerCheckpoint(1, 4, 4)
	if id := receive(t, rep.acks, "ack of final checkpoint 4"); id != 4 {
		t.Fatalf("got ack %d, want 4", id)
	}
	f := readState(t, st, CheckpointDir("j", 4)+"/"+StateFileName(dst.ID, 0))
	if !f.Header.EndedInput {
		t.Fatal("final checkpoint's state file is not marked as ended")
	}
	ex.NotifyCheckpointComplete(1, 4)
	for {
		s := receive(t, rep.states, "FINISHED")
		if s == string(core.TaskFinished) {
			break
		}
		if s != string(core.TaskDeploying) && s != string(core.TaskInitializing) && s != string(core.TaskRunning) {
			t.Fatalf("subtask went %s", s)
		}
	}
	// A finished subtask still acknowledges later checkpoints with its final state.
	ex.TriggerCheckpoint(1, 5, 5)
	if id := receive(t, rep.acks, "ack of checkpoint 5 by the finished subtask"); id != 5 {
		t.Fatalf("got ack %d, want 5", id)
	}
	if f := readState(t, st, CheckpointDir("j", 5)+"/"+StateFileName(dst.ID, 0)); !f.Header.EndedInput || f.Header.Checkpoint != 5 {
		t.Fatalf("finished subtask's state for checkpoint 5: header %+v", f.Header)
	}
}

func readState(t *testing.T, st storage.Storage, name string) *snapshot.File {
	t.Helper()
	rc, err := st.Open(context.Background(), name)
	if err != nil {
		t.Fatal(err)
	}
	defer rc.Close()
	f, err := snapshot.Read(rc, nil)
	if err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	return f
}
