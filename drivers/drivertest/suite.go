// Package drivertest is the conformance suite every drivers.Driver passes. Each driver
// package calls Suite from its tests with a function that builds a fresh driver against
// its fake (or real) cluster.
package drivertest

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/tidestream/tide/core"
	"github.com/tidestream/tide/drivers"
)

// Harness is one fresh driver plus the hooks the suite needs to play the cluster.
type Harness struct {
	Driver drivers.Driver
	// Join makes a worker appear the way the cluster would: a script starting a
	// TaskManager (passive drivers) or a requested container coming up (active ones).
	// It returns the driver's refusal, if any.
	Join func(ctx context.Context, w drivers.Worker) error
	// Recovered lists the workers the driver must report from Start (a previous
	// attempt's survivors, as set up by the fake cluster).
	Recovered []drivers.Worker
	// KeepsBlocked: the driver admits workers on blocked nodes, which the scheduler keeps
	// registered and unused until the block ends (standalone: nothing would start a
	// refused TaskManager again).
	KeepsBlocked bool
}

// Recorder is an EventHandler that remembers every event.
type Recorder struct {
	mu         sync.Mutex
	terminated []core.TaskManagerID
	reasons    []string
	errs       []error
	notify     chan struct{}
}

// NewRecorder returns an empty Recorder.
func NewRecorder() *Recorder { return &Recorder{notify: make(chan struct{}, 64)} }

func (r *Recorder) OnWorkerTerminated(id core.TaskManagerID, reason string) {
	r.mu.Lock()
	r.terminated = append(r.terminated, id)
	r.reasons = append(r.reasons, reason)
	r.mu.Unlock()
	r.signal()
}

func (r *Recorder) OnWorkerRequestFailed(reason string) {
	r.OnError(fmt.Errorf("worker request failed: %s", reason))
}

func (r *Recorder) OnError(err error) {
	r.mu.Lock()
	r.errs = append(r.errs, err)
	r.mu.Unlock()
	r.signal()
}

func (r *Recorder) signal() {
	select {
	case r.notify <- struct{}{}:
	default:
	}
}

// Terminated returns the workers reported terminated so far.
func (r *Recorder) Terminated() []core.TaskManagerID {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]core.TaskManagerID(nil), r.terminated...)
}

// WaitTerminated waits until id was reported terminated or ctx ends.
func (r *Recorder) WaitTerminated(ctx context.Context, id core.TaskManagerID) error {
	for {
		for _, got := range r.Terminated() {
			if got == id {
				return nil
			}
		}
		select {
		case <-r.notify:
		case <-ctx.Done():
			return fmt.Errorf("worker %s never reported terminated: %w", id, ctx.Err())
		}
	}
}

// Suite runs every conformance test against drivers built by newHarness.
func Suite(t *testing.T, newHarness func(t *testing.T) Harness) {
	t.Helper()
	t.Run("CallsBeforeStartFail", func(t *testing.T) { testCallsBeforeStart(t, newHarness(t)) })
	t.Run("StartReturnsRecovered", func(t *testing.T) { testStartRecovered(t, newHarness(t)) })
	t.Run("StartTwiceFails", func(t *testing.T) { testStartTwice(t, newHarness(t)) })
	t.Run("RequestRelease", func(t *testing.T) { testRequestRelease(t, newHarness(t)) })
	t.Run("TerminatedOnlyAfterReleaseReturns", func(t *testing.T) { testTerminatedAfterRelease(t, newHarness(t)) })
	t.Run("BlockedNodesRefused", func(t *testing.T) { testBlocked(t, newHarness(t)) })
	t.Run("DeregisterEachStatus", func(t *testing.T) {
		for _, st := range drivers.FinalStatuses {
			t.Run(string(st), func(t *testing.T) { testDeregister(t, newHarness(t), st) })
		}
	})
	t.Run("CloseIdempotentAndFinal", func(t *testing.T) { testClose(t, newHarness(t)) })
}

func testContext(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	t.Cleanup(cancel)
	return ctx
}

func noneBlocked(core.NodeID) bool { return false }

func start(t *testing.T, ctx context.Context, h Harness, rec *Recorder, blocked drivers.BlockedNodes) []drivers.Worker {
	t.Helper()
	ws, err := h.Driver.Start(ctx, rec, blocked)
	if err != nil {
		t.Fatalf("Start: %v", err)
	}
	t.Cleanup(func() { _ = h.Driver.Close(context.Background()) })
	return ws
}

// obtainWorker gets a worker the driver knows: requested from an active driver, or
// joined by itself to a passive one.
func obtainWorker(t *testing.T, ctx context.Context, h Harness, id core.TaskManagerID, node core.NodeID) core.TaskManagerID {
	t.Helper()
	got, err := h.Driver.RequestWorker(ctx, drivers.WorkerSpec{Slots: 1})
	switch {
	case errors.Is(err, drivers.ErrPassive):
		if err := h.Join(ctx, drivers.Worker{ID: id, Node: node}); err != nil {
			t.Fatalf("Join(%s on %s): %v", id, node, err)
		}
		return id
	case err != nil:
		t.Fatalf("RequestWorker: %v", err)
	}
	if got == "" {
		t.Fatal("RequestWorker returned an empty worker id")
	}
	if err := h.Join(ctx, drivers.Worker{ID: got, Node: node}); err != nil {
		t.Fatalf("Join(%s on %s): %v", got, node, err)
	}
	return got
}

func testCallsBeforeStart(t *testing.T, h Harness) {
	ctx := testContext(t)
	if _, err := h.Driver.RequestWorker(ctx, drivers.WorkerSpec{Slots: 1}); !errors.Is(err, drivers.ErrNotStarted) && !errors.Is(err, drivers.ErrPassive) {
		t.Errorf("RequestWorker before Start = %v, want ErrNotStarted (or ErrPassive)", err)
	}
	if err := h.Driver.ReleaseWorker(ctx, "tm-x"); !errors.Is(err, drivers.ErrNotStarted) {
		t.Errorf("ReleaseWorker before Start = %v, want ErrNotStarted", err)
	}
	if err := h.Driver.Deregister(ctx, drivers.StatusSucceeded, ""); !errors.Is(err, drivers.ErrNotStarted) {
		t.Errorf("Deregister before Start = %v, want ErrNotStarted", err)
	}
	if h.Driver.Name() == "" {
		t.Error("Name() is empty")
	}
}

func testStartRecovered(t *testing.T, h Harness) {
	ctx := testContext(t)
	ws := start(t, ctx, h, NewRecorder(), noneBlocked)
	want := map[core.TaskManagerID]core.NodeID{}
	for _, w := range h.Recovered {
		want[w.ID] = w.Node
	}
	if len(ws) != len(want) {
		t.Fatalf("Start recovered %d workers %v, want %d %v", len(ws), ws, len(want), h.Recovered)
	}
	for _, w := range ws {
		node, ok := want[w.ID]
		if !ok || node != w.Node {
			t.Errorf("recovered worker %+v not expected (want %v)", w, h.Recovered)
		}
		delete(want, w.ID)
	}
}

func testStartTwice(t *testing.T, h Harness) {
	ctx := testContext(t)
	start(t, ctx, h, NewRecorder(), noneBlocked)
	if _, err := h.Driver.Start(ctx, NewRecorder(), noneBlocked); !errors.Is(err, drivers.ErrAlreadyStarted) {
		t.Fatalf("second Start = %v, want ErrAlreadyStarted", err)
	}
}

func testRequestRelease(t *testing.T, h Harness) {
	ctx := testContext(t)
	rec := NewRecorder()
	start(t, ctx, h, rec, noneBlocked)
	if err := h.Driver.ReleaseWorker(ctx, "tm-never-seen"); !errors.Is(err, drivers.ErrUnknownWorker) {
		t.Fatalf("ReleaseWorker(unknown) = %v, want ErrUnknownWorker", err)
	}
	a := obtainWorker(t, ctx, h, "tm-a", "node-1")
	b := obtainWorker(t, ctx, h, "tm-b", "node-2")
	if a == b {
		t.Fatalf("two workers share id %s", a)
	}
	if err := h.Driver.ReleaseWorker(ctx, a); err != nil {
		t.Fatalf("ReleaseWorker(%s): %v", a, err)
	}
	if err := rec.WaitTerminated(ctx, a); err != nil {
		t.Fatal(err)
	}
	if err := h.Driver.ReleaseWorker(ctx, a); !errors.Is(err, drivers.ErrUnknownWorker) {
		t.Fatalf("second ReleaseWorker(%s) = %v, want ErrUnknownWorker", a, err)
	}
	for _, id := range rec.Terminated() {
		if id == b {
			t.Fatalf("worker %s reported terminated though only %s was released", b, a)
		}
	}
}

// handlerProbe records whether ReleaseWorker had returned when the event arrived.
// handlerProbe checks that OnWorkerTerminated for a released worker is never delivered
// from inside ReleaseWorker (the AM calls drivers from its event loop; a callback during
// the call would re-enter it). The test holds inCall for the duration of ReleaseWorker: a
// callback on another goroutine waits for the call to return and is fine; a callback on
// the caller's own goroutine cannot get the lock within the grace period and counts as early.
type handlerProbe struct {
	*Recorder
	inCall   chan struct{} // a one-slot lock: full while ReleaseWorker runs
	returned bool          // guarded by inCall
	early    chan core.TaskManagerID
}

func (p *handlerProbe) OnWorkerTerminated(id core.TaskManagerID, reason string) {
	select {
	case p.inCall <- struct{}{}:
		early := !p.returned
		<-p.inCall
		if early {
			p.early <- id
		}
	case <-time.After(5 * time.Second):
		p.early <- id // delivered synchronously from within ReleaseWorker
	}
	p.Recorder.OnWorkerTerminated(id, reason)
}

func testTerminatedAfterRelease(t *testing.T, h Harness) {
	ctx := testContext(t)
	probe := &handlerProbe{Recorder: NewRecorder(), inCall: make(chan struct{}, 1), early: make(chan core.TaskManagerID, 4)}
	if _, err := h.Driver.Start(ctx, probe, noneBlocked); err != nil {
		t.Fatalf("Start: %v", err)
	}
	t.Cleanup(func() { _ = h.Driver.Close(context.Background()) })
	id := obtainWorker(t, ctx, h, "tm-r", "node-1")
	probe.inCall <- struct{}{}
	err := h.Driver.ReleaseWorker(ctx, id)
	probe.returned = true
	<-probe.inCall
	if err != nil {
		t.Fatalf("ReleaseWorker(%s): %v", id, err)
	}
	if err := probe.WaitTerminated(ctx, id); err != nil {
		t.Fatal(err)
	}
	select {
	case early := <-probe.early:
		t.Fatalf("OnWorkerTerminated(%s) was delivered from within ReleaseWorker", early)
	default:
	}
}

func testBlocked(t *testing.T, h Harness) {
	ctx := testContext(t)
	var mu sync.Mutex
	blockedSet := map[core.NodeID]bool{"bad-node": true}
	blocked := func(n core.NodeID) bool {
		mu.Lock()
		defer mu.Unlock()
		return blockedSet[n]
	}
	start(t, ctx, h, NewRecorder(), blocked)
	if _, err := h.Driver.RequestWorker(ctx, drivers.WorkerSpec{Slots: 1}); err != nil && !errors.Is(err, drivers.ErrPassive) {
		t.Fatalf("RequestWorker: %v", err)
	}
	err := h.Join(ctx, drivers.Worker{ID: "tm-bad", Node: "bad-node"})
	switch {
	case h.KeepsBlocked && err != nil:
		t.Fatalf("Join on a blocked node = %v, want it admitted (the driver keeps workers on blocked nodes)", err)
	case !h.KeepsBlocked && !errors.Is(err, drivers.ErrBlocked):
		t.Fatalf("Join on a blocked node = %v, want ErrBlocked", err)
	}
	if err := h.Join(ctx, drivers.Worker{ID: "tm-good", Node: "good-node"}); err != nil {
		t.Fatalf("Join on a free node: %v", err)
	}
	// The driver reads the blocklist on every admission: unblocking takes effect at once.
	mu.Lock()
	delete(blockedSet, "bad-node")
	mu.Unlock()
	if err := h.Join(ctx, drivers.Worker{ID: "tm-bad2", Node: "bad-node"}); err != nil {
		t.Fatalf("Join on an unblocked node: %v", err)
	}
}

func testDeregister(t *testing.T, h Harness, st drivers.FinalStatus) {
	ctx := testContext(t)
	start(t, ctx, h, NewRecorder(), noneBlocked)
	if err := h.Driver.Deregister(ctx, st, "diagnostics for "+string(st)); err != nil {
		t.Fatalf("Deregister(%s): %v", st, err)
	}
	if err := h.Driver.Close(ctx); err != nil {
		t.Fatalf("Close after Deregister(%s): %v", st, err)
	}
}

func testClose(t *testing.T, h Harness) {
	ctx := testContext(t)
	start(t, ctx, h, NewRecorder(), noneBlocked)
	if err := h.Driver.Close(ctx); err != nil {
		t.Fatalf("Close: %v", err)
	}
	if err := h.Driver.Close(ctx); err != nil {
		t.Fatalf("second Close: %v", err)
	}
	if err := h.Driver.ReleaseWorker(ctx, "tm-a"); !errors.Is(err, drivers.ErrClosed) {
		t.Fatalf("ReleaseWorker after Close = %v, want ErrClosed", err)
	}
	if _, err := h.Driver.RequestWorker(ctx, drivers.WorkerSpec{Slots: 1}); !errors.Is(err, drivers.ErrClosed) && !errors.Is(err, drivers.ErrPassive) {
		t.Fatalf("RequestWorker after Close = %v, want ErrClosed (or ErrPassive)", err)
	}
}
