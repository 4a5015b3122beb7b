package exec_test

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"sync"
	"testing"
	"time"

	"github.com/tidestream/tide/core"
	"github.com/tidestream/tide/core/checkpoint"
	"github.com/tidestream/tide/core/jobgraph"
	"github.com/tidestream/tide/storage"
	"github.com/tidestream/tide/stream"
	"github.com/tidestream/tide/tm/exec"
	"github.com/tidestream/tide/tm/netplane"
)

// fakeAM plays the AM for in-process tests: it deploys attempts on a few executors, serves
// split requests from real enumerators, triggers checkpoints, completes them when every
// subtask acknowledged (writing _metadata last) and redeploys at a new parallelism from the
// latest completed checkpoint.
type fakeAM struct {
	t     testing.TB
	jobID string
	job   *stream.Job
	graph *jobgraph.JobGraph
	store storage.Storage
	tms   []*fakeTM
	log   *slog.Logger
	// checkpointing is passed to every deployment (set it before the first deploy when
	// the test runs checkpoints).
	checkpointing bool
	// holdNotifications keeps completed checkpoints from being announced to the executors
	// (deliverComplete sends them selectively).
	holdNotifications bool
	// keyGroups, when set, gives the key-group ranges of a deployment at parallelism p
	// (one start and end per subtask, as the AM's sticky placement sends them); nil
	// deploys the equal split.
	keyGroups func(p int) (starts, ends []int)

	mu          sync.Mutex
	attempt     int64
	parallelism int
	placement   map[string]*fakeTM // "vertex#index" -> tm
	states      map[string]core.TaskState
	failures    []string
	enums       map[string]stream.SplitEnumerator
	enumState   map[int64]map[string][]byte // checkpoint -> vertex -> enumerator state
	nextCkpt    int64
	pending     map[int64]int // acks still missing
	acked       map[int64][]checkpoint.SubtaskState
	completed   int64
	completedIn int           // checkpoints completed in the current attempt
	inputEnded  []string      // "vertex#index" of the current attempt's InputEnded reports
	changed     chan struct{} // closed and replaced on every change
}

type fakeTM struct {
	id    string
	plane *netplane.Plane
	exec  *exec.Executor
}

// reporter tags reports with the executor that sent them.
type reporter struct {
	am *fakeAM
	tm string
}

// newFakeAM starts tmCount executors for job; opts adjust their configuration.
func newFakeAM(t testing.TB, job *stream.Job, tmCount int, opts ...func(*exec.Config)) *fakeAM {
	t.Helper()
	return newFakeAMWithPlanes(t, job, tmCount, netplane.Options{FlushInterval: 5 * time.Millisecond}, opts...)
}

// newFakeAMWithPlanes is newFakeAM with the executors' data planes configured by popts.
func newFakeAMWithPlanes(t testing.TB, job *stream.Job, tmCount int, popts netplane.Options, opts ...func(*exec.Config)) *fakeAM {
	t.Helper()
	ctx := context.Background()
	st, err := storage.Open(ctx, "file://"+t.TempDir(), storage.Options{})
	if err != nil {
		t.Fatal(err)
	}
	g, err := job.Graph()
	if err != nil {
		t.Fatal(err)
	}
	log := slog.New(slog.NewTextHandler(io.Discard, nil))
	if testing.Verbose() {
		log = slog.New(slog.NewTextHandler(testWriter{t}, &slog.HandlerOptions{Level: slog.LevelInfo}))
	}
	am := &fakeAM{t: t, jobID: "job-1", job: job, graph: g, store: st, log: log,
		enumState: map[int64]map[string][]byte{}, changed: make(chan struct{})}
	for i := range tmCount {
		popts.Logger = log
		p, err := netplane.Listen(ctx, "127.0.0.1:0", popts)
		if err != nil {
			t.Fatal(err)
		}
		tm := &fakeTM{id: fmt.Sprintf("tm-%d", i), plane: p}
		cfg := exec.Config{JobID: am.jobID, Job: job, TaskManagerID: tm.id, Storage: st, Plane: p,
			Reporter: &reporter{am: am, tm: tm.id}, Logger: log}
		for _, o := range opts {
			o(&cfg)
		}
		tm.exec = exec.NewExecutor(cfg)
		am.tms = append(am.tms, tm)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		for _, tm := range am.tms {
			if err := tm.exec.Close(ctx); err != nil {
				t.Errorf("closing executor %s: %v", tm.id, err)
			}
			if err := tm.plane.Close(); err != nil {
				t.Errorf("closing plane %s: %v", tm.id, err)
			}
		}
	})
	return am
}

type testWriter struct{ t testing.TB }

func (w testWriter) Write(p []byte) (int, error) {
	w.t.Log(string(p))
	return len(p), nil
}

func key(vertex string, index int) string { return fmt.Sprintf("%s#%d", vertex, index) }

func (am *fakeAM) notifyLocked() {
	close(am.changed)
	am.changed = make(chan struct{})
}

// deploy cancels the current attempt and starts a new one at parallelism p (every vertex),
// restoring from the latest completed checkpoint.
func (am *fakeAM) deploy(p int) {
	am.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	am.mu.Lock()
	old := am.attempt
	am.attempt++ // reports of the old attempt are stale from now on, as in the AM's Canceling state
	am.mu.Unlock()
	if old > 0 {
		for _, tm := range am.tms {
			tm.exec.Cancel(ctx, old)
		}
	}
	am.mu.Lock()
	am.parallelism = p
	am.states = map[string]core.TaskState{}
	am.placement = map[string]*fakeTM{}
	am.pending = map[int64]int{}
	am.completedIn = 0
	am.inputEnded = nil
	restore := am.completed
	am.enums = map[string]stream.SplitEnumerator{}
	for _, sv := range am.job.Sources() {
		var saved []byte
		if restore > 0 {
			saved = am.enumState[restore][sv.Vertex]
		}
		e, err := sv.Source.CreateEnumerator(saved, p)
		if err != nil {
			am.mu.Unlock()
			am.t.Fatalf("creating enumerator of %s: %v", sv.Vertex, err)
		}
		if err := e.Start(ctx); err != nil {
			am.mu.Unlock()
			am.t.Fatal(err)
		}
		am.enums[sv.Vertex] = e
	}
	spec := exec.DeploySpec{Attempt: am.attempt, RestoreFrom: restore, CheckpointingEnabled: am.checkpointing}
	perTM := map[*fakeTM][]exec.Subtask{}
	for _, v := range am.graph.Vertices {
		vp := exec.VertexParallelism{Vertex: v.ID, Parallelism: p, MaxParallelism: v.EffectiveMaxParallelism()}
		if am.keyGroups != nil {
			vp.KeyGroupStart, vp.KeyGroupEnd = am.keyGroups(p)
		}
		spec.Vertices = append(spec.Vertices, vp)
		for i := range p {
			tm := am.tms[i%len(am.tms)]
			am.placement[key(v.ID, i)] = tm
			am.states[key(v.ID, i)] = core.TaskDeploying
			perTM[tm] = append(perTM[tm], exec.Subtask{Vertex: v.ID, Index: i, Slot: i / len(am.tms)})
			spec.Locations = append(spec.Locations, exec.Location{Vertex: v.ID, Index: i, TaskManagerID: tm.id, DataAddress: tm.plane.Addr()})
		}
	}
	attempt := am.attempt
	am.mu.Unlock()
	for _, tm := range am.tms {
		s := spec
		s.Subtasks = perTM[tm]
		if err := tm.exec.Deploy(ctx, s); err != nil {
			am.t.Fatalf("deploying attempt %d on %s: %v", attempt, tm.id, err)
		}
	}
}

// trigger starts the next checkpoint: the enumerators' state first, then the barriers. As
// the AM's coordinator, it starts none while a subtask of the attempt is still being
// deployed: an executor that has not taken the attempt yet drops its trigger, and the
// checkpoint would wait for acknowledgements forever.
func (am *fakeAM) trigger() {
	am.mu.Lock()
	defer am.mu.Unlock()
	if len(am.pending) > 0 {
		return
	}
	for _, st := range am.states {
		if st == core.TaskDeploying || st == core.TaskInitializing {
			return
		}
	}
	am.nextCkpt++
	id := am.nextCkpt
	states := map[string][]byte{}
	for v, e := range am.enums {
		b, err := e.SnapshotState(id)
		if err != nil {
			am.failures = append(am.failures, fmt.Sprintf("enumerator %s snapshot: %v", v, err))
			return
		}
		states[v] = b
	}
	am.enumState[id] = states
	am.pending[id] = len(am.states)
	for _, tm := range am.tms {
		tm.exec.TriggerCheckpoint(am.attempt, id, time.Now().UnixMilli())
	}
}

// run triggers checkpoints every interval until ctx ends.
func (am *fakeAM) run(ctx context.Context, interval time.Duration) {
	tick := time.NewTicker(interval)
	defer tick.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
			am.trigger()
		}
	}
}

// waitFor waits until cond (called with the lock held) holds or a task failed.
func (am *fakeAM) waitFor(what string, cond func() bool) {
	am.t.Helper()
	am.waitForLong(what, 60*time.Second, cond)
}

// waitForLong is waitFor with another deadline (benchmarks of large state).
func (am *fakeAM) waitForLong(what string, timeout time.Duration, cond func() bool) {
	am.t.Helper()
	deadline := time.After(timeout)
	for {
		am.mu.Lock()
		if len(am.failures) > 0 {
			f := am.failures
			am.mu.Unlock()
			am.t.Fatalf("waiting for %s: failures: %v", what, f)
		}
		ok := cond()
		ch := am.changed
		am.mu.Unlock()
		if ok {
			return
		}
		select {
		case <-ch:
		case <-deadline:
			am.mu.Lock()
			defer am.mu.Unlock()
			am.t.Fatalf("timed out waiting for %s; attempt %d states %v, pending checkpoints %v", what, am.attempt, am.states, am.pending)
		}
	}
}

func (am *fakeAM) allInState(s core.TaskState) bool {
	for _, st := range am.states {
		if st != s {
			return false
		}
	}
	return true
}

func (r *reporter) TaskState(attempt int64, vertex string, index int, state string, err error, unrecoverable bool) {
	am := r.am
	am.mu.Lock()
	defer am.mu.Unlock()
	if attempt != am.attempt {
		return
	}
	am.states[key(vertex, index)] = core.TaskState(state)
	if core.TaskState(state) == core.TaskFailed {
		am.failures = append(am.failures, fmt.Sprintf("%s on %s failed (unrecoverable=%v, lost peer %q): %v",
			key(vertex, index), r.tm, unrecoverable, exec.LostPeer(err), err))
	}
	am.notifyLocked()
}

func (r *reporter) CheckpointAck(attempt, id int64, vertex string, index int, handles []exec.StateHandle) {
	am := r.am
	am.mu.Lock()
	defer am.mu.Unlock()
	if attempt != am.attempt {
		return
	}
	left, ok := am.pending[id]
	if !ok {
		return
	}
	st := checkpoint.SubtaskState{Subtask: checkpoint.Subtask{Vertex: vertex, Index: index}}
	for _, h := range handles {
		st.Handles = append(st.Handles, checkpoint.StateHandle{Name: h.Name, Size: h.Size})
	}
	if am.acked == nil {
		am.acked = map[int64][]checkpoint.SubtaskState{}
	}
	am.acked[id] = append(am.acked[id], st)
	if left--; left > 0 {
		am.pending[id] = left
		return
	}
	delete(am.pending, id)
	// _metadata last, listing every subtask's files as the real AM does.
	data, err := checkpoint.EncodeMetadata(checkpoint.NewMetadata(am.jobID,
		checkpoint.Completed{ID: id, Attempt: attempt, Handles: am.acked[id]}, nil, nil))
	delete(am.acked, id)
	meta := checkpoint.MetadataPath(am.jobID, id)
	if err == nil {
		err = storage.WriteFile(context.Background(), am.store, meta, data)
	}
	if err != nil {
		am.failures = append(am.failures, fmt.Sprintf("writing %s: %v", meta, err))
		return
	}
	am.completed = id
	am.completedIn++
	for v, e := range am.enums {
		e.NotifyCheckpointComplete(id)
		_ = v
	}
	if !am.holdNotifications {
		for _, tm := range am.tms {
			tm.exec.NotifyCheckpointComplete(attempt, id)
		}
	}
	am.notifyLocked()
}

// deliverComplete announces checkpoint id of the current attempt to one executor only.
func (am *fakeAM) deliverComplete(tm int, id int64) {
	am.mu.Lock()
	attempt := am.attempt
	am.mu.Unlock()
	am.tms[tm].exec.NotifyCheckpointComplete(attempt, id)
}

func (r *reporter) CheckpointDecline(attempt, id int64, vertex string, index int, reason string) {
	am := r.am
	am.mu.Lock()
	defer am.mu.Unlock()
	if attempt == am.attempt {
		delete(am.pending, id)
		am.notifyLocked()
	}
}

func (r *reporter) InputEnded(attempt int64, vertex string, index int) {
	am := r.am
	am.mu.Lock()
	defer am.mu.Unlock()
	if attempt == am.attempt {
		am.inputEnded = append(am.inputEnded, key(vertex, index))
		am.notifyLocked()
	}
}

func (r *reporter) RequestSplit(attempt int64, vertex string, index int, _ bool) {
	am := r.am
	am.mu.Lock()
	defer am.mu.Unlock()
	if attempt != am.attempt {
		return
	}
	e := am.enums[vertex]
	if e == nil {
		am.failures = append(am.failures, fmt.Sprintf("split request from non-source %s", key(vertex, index)))
		return
	}
	splits, noMore := e.HandleSplitRequest(index)
	am.placement[key(vertex, index)].exec.AddSplits(attempt, vertex, index, splits, noMore)
}
