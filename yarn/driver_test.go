package yarn

import (
	"context"
	"errors"
	"fmt"
	"os"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/tidestream/tide/core"
	"github.com/tidestream/tide/drivers"
	"github.com/tidestream/tide/drivers/drivertest"
	"github.com/tidestream/tide/yarn/yarnpb"
)

func newFakeDriver(t *testing.T, f *fakeRM, nodes fakeNodes) *Driver {
	t.Helper()
	d, err := NewDriver(DriverConfig{
		Scheduler: f, Containers: fakeNM{f}, Nodes: nodes,
		Host: "am-host", RPCPort: 6123, TrackingURL: "http://am-host:8081",
		MemoryMB: 256, VCores: 1, Launch: fakeLaunch, NodeIDs: NodeIDHost,
		Heartbeat: time.Hour, FastHeartbeat: 5 * time.Millisecond,
	})
	if err != nil {
		t.Fatal(err)
	}
	return d
}

// joinFake plays "a container comes up on w.Node and its TaskManager registers": the fake
// RM hands out a container there; if the driver launches a TaskManager in it, that
// TaskManager registers (Admit); if the driver gives the container back (blocked node or
// no request), a TaskManager started there by hand is what registers.
func joinFake(d *Driver, f *fakeRM) func(ctx context.Context, w drivers.Worker) error {
	return func(ctx context.Context, w drivers.Worker) error {
		cid := f.offer(string(w.Node), 8041)
		d.kick()
		var launched core.TaskManagerID
		err := f.await(ctx, "container "+cid+" launched or released", func() bool {
			launched = f.launched[cid]
			return launched != "" || f.released[cid]
		})
		if err != nil {
			return err
		}
		if launched != "" {
			w.ID = launched
		}
		return d.Admit(ctx, w)
	}
}

func TestDriverConformance(t *testing.T) {
	drivertest.Suite(t, func(t *testing.T) drivertest.Harness {
		f := newFakeRM()
		d := newFakeDriver(t, f, fakeNodes{"node-1:8041", "node-2:8041", "bad-node:8041", "good-node:8041"})
		return drivertest.Harness{Driver: d, Join: joinFake(d, f)}
	})
}

func ctxT(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	t.Cleanup(cancel)
	return ctx
}

func startFake(t *testing.T, d *Driver, rec drivers.EventHandler, blocked drivers.BlockedNodes) {
	t.Helper()
	if _, err := d.Start(ctxT(t), rec, blocked); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = d.Close(context.Background()) })
}

// TestDriverAsksAreAbsolute: the ask carries the total still wanted, sent only when it
// changes, and drops as containers arrive.
func TestDriverAsksAreAbsolute(t *testing.T) {
	ctx := ctxT(t)
	f := newFakeRM()
	d := newFakeDriver(t, f, nil)
	startFake(t, d, drivertest.NewRecorder(), nil)
	for range 3 {
		if _, err := d.RequestWorker(ctx, drivers.WorkerSpec{Slots: 1}); err != nil {
			t.Fatal(err)
		}
	}
	if err := f.await(ctx, "an ask for 3", func() bool { return f.outstanding == 3 }); err != nil {
		t.Fatal(err)
	}
	f.offer("n1", 1)
	f.offer("n2", 2)
	d.kick()
	if err := f.await(ctx, "2 launches", func() bool { return len(f.launched) == 2 }); err != nil {
		t.Fatal(err)
	}
	// A few more heartbeats: the outstanding 1 must not be asked again.
	n := f.allocates
	d.kick()
	if err := f.await(ctx, "more heartbeats", func() bool { return f.allocates >= n+3 }); err != nil {
		t.Fatal(err)
	}
	f.mu.Lock()
	asks := slices.Clone(f.asks)
	f.mu.Unlock()
	// Each ask is the total still wanted, sent when it changes: [3], or a rising series
	// ending at 3 when heartbeats came between the requests (as on a loaded machine).
	// Relative asks would repeat (1, 1, 1); an ask sent again, or one for the
	// outstanding 1 after the launches, would not rise.
	rising := len(asks) > 0 && asks[len(asks)-1] == 3
	for i := 1; i < len(asks); i++ {
		rising = rising && asks[i] > asks[i-1]
	}
	if !rising {
		t.Fatalf("asks sent %v, want totals rising to 3, each sent once (absolute)", asks)
	}
	st := d.Status()
	if st.Waiting != 1 || st.Launched != 2 {
		t.Fatalf("status %+v, want 1 waiting and 2 launched", st)
	}
}

// TestDriverReleaseWaitingShrinksAsk: releasing a worker that has no container yet lowers
// the absolute ask.
func TestDriverReleaseWaitingShrinksAsk(t *testing.T) {
	ctx := ctxT(t)
	f := newFakeRM()
	d := newFakeDriver(t, f, nil)
	rec := drivertest.NewRecorder()
	startFake(t, d, rec, nil)
	a, _ := d.RequestWorker(ctx, drivers.WorkerSpec{})
	if _, err := d.RequestWorker(ctx, drivers.WorkerSpec{}); err != nil {
		t.Fatal(err)
	}
	if err := f.await(ctx, "an ask for 2", func() bool { return f.outstanding == 2 }); err != nil {
		t.Fatal(err)
	}
	if err := d.ReleaseWorker(ctx, a); err != nil {
		t.Fatal(err)
	}
	if err := rec.WaitTerminated(ctx, a); err != nil {
		t.Fatal(err)
	}
	if err := f.await(ctx, "the ask lowered to 1", func() bool { return f.outstanding == 1 }); err != nil {
		t.Fatal(err)
	}
}

// TestDriverLostContainerIsLostTaskManager: a registered TaskManager's container that
// completes is reported terminated at once, with the exit status in the reason.
func TestDriverLostContainerIsLostTaskManager(t *testing.T) {
	ctx := ctxT(t)
	f := newFakeRM()
	d := newFakeDriver(t, f, nil)
	rec := drivertest.NewRecorder()
	startFake(t, d, rec, nil)
	id, _ := d.RequestWorker(ctx, drivers.WorkerSpec{})
	if err := joinFake(d, f)(ctx, drivers.Worker{ID: id, Node: "n1"}); err != nil {
		t.Fatal(err)
	}
	var cid string
	f.mu.Lock()
	for c, tm := range f.launched {
		if tm == id {
			cid = c
		}
	}
	f.mu.Unlock()
	f.kill(cid, 137)
	d.kick()
	if err := rec.WaitTerminated(ctx, id); err != nil {
		t.Fatal(err)
	}
}

// recorder with request failures kept apart from errors.
type failRecorder struct {
	*drivertest.Recorder
	mu     sync.Mutex
	failed []string
}

func (r *failRecorder) OnWorkerRequestFailed(reason string) {
	r.mu.Lock()
	r.failed = append(r.failed, reason)
	r.mu.Unlock()
}

func (r *failRecorder) failures() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return slices.Clone(r.failed)
}

// TestDriverRetriesUnregisteredContainers: a container that dies before its TaskManager
// registers is asked for again; after MaxLaunchFailures the request fails.
func TestDriverRetriesUnregisteredContainers(t *testing.T) {
	ctx := ctxT(t)
	f := newFakeRM()
	d := newFakeDriver(t, f, nil)
	rec := &failRecorder{Recorder: drivertest.NewRecorder()}
	startFake(t, d, rec, nil)
	id, _ := d.RequestWorker(ctx, drivers.WorkerSpec{})
	for i := range 3 {
		cid := f.offer(fmt.Sprintf("n%d", i), 1)
		d.kick()
		if err := f.await(ctx, "launch of "+cid, func() bool { return f.launched[cid] == id }); err != nil {
			t.Fatal(err)
		}
		f.kill(cid, 1)
		d.kick()
		if i < 2 {
			if err := f.await(ctx, "the ask renewed", func() bool { return f.outstanding == 1 && f.asks[len(f.asks)-1] == 1 && len(f.asks) >= i+2 }); err != nil {
				t.Fatal(err)
			}
		}
	}
	deadline := time.After(20 * time.Second)
	for len(rec.failures()) == 0 {
		select {
		case <-deadline:
			t.Fatal("the request never failed")
		case <-time.After(5 * time.Millisecond):
			d.kick()
		}
	}
	if got := rec.failures()[0]; !strings.Contains(got, string(id)) || !strings.Contains(got, "3 containers failed") {
		t.Fatalf("failure reason %q", got)
	}
	if len(rec.Terminated()) != 0 {
		t.Fatalf("an unregistered TaskManager was reported terminated: %v", rec.Terminated())
	}
}

// TestDriverStartFailureRetries: a NodeManager refusing startContainers gives the
// container back and the request is asked again.
func TestDriverStartFailureRetries(t *testing.T) {
	ctx := ctxT(t)
	f := newFakeRM()
	f.refuseStart = true
	d := newFakeDriver(t, f, nil)
	startFake(t, d, drivertest.NewRecorder(), nil)
	if _, err := d.RequestWorker(ctx, drivers.WorkerSpec{}); err != nil {
		t.Fatal(err)
	}
	cid := f.offer("n1", 1)
	d.kick()
	if err := f.await(ctx, "the refused container released", func() bool { return f.released[cid] }); err != nil {
		t.Fatal(err)
	}
	if st := d.Status(); st.Waiting != 1 {
		t.Fatalf("status %+v, want the request waiting again", st)
	}
}

// TestDriverBlacklistFollowsBlocklist: additions and removals since the last heartbeat go
// to YARN, in the configured node id format; every node blocked is reported.
func TestDriverBlacklistFollowsBlocklist(t *testing.T) {
	for _, tt := range []struct {
		format NodeIDFormat
		block  core.NodeID
		want   string
	}{
		{NodeIDHostPort, "h1:1", "h1:1"},
		{NodeIDHost, "h2", "h2"},
	} {
		t.Run(string(tt.format), func(t *testing.T) {
			ctx := ctxT(t)
			f := newFakeRM()
			d := newFakeDriver(t, f, fakeNodes{"h1:1", "h2:2"})
			d.cfg.NodeIDs = tt.format
			var mu sync.Mutex
			blocked := map[core.NodeID]bool{}
			isBlocked := func(n core.NodeID) bool { mu.Lock(); defer mu.Unlock(); return blocked[n] }
			startFake(t, d, drivertest.NewRecorder(), isBlocked)
			mu.Lock()
			blocked[tt.block] = true
			mu.Unlock()
			d.kick()
			if err := f.await(ctx, tt.want+" blacklisted", func() bool { return f.blacklist[tt.want] && len(f.blacklist) == 1 }); err != nil {
				t.Fatal(err)
			}
			if st := d.Status(); st.AllNodesBlocked {
				t.Fatalf("status %+v: one of two nodes blocked is not all", st)
			}
			// Block the other node too while a container is wanted.
			mu.Lock()
			blocked["h1:1"], blocked["h1"], blocked["h2:2"], blocked["h2"] = true, true, true, true
			mu.Unlock()
			if _, err := d.RequestWorker(ctx, drivers.WorkerSpec{}); err != nil {
				t.Fatal(err)
			}
			if err := f.await(ctx, "both blacklisted", func() bool { return len(f.blacklist) == 2 }); err != nil {
				t.Fatal(err)
			}
			waitStatus(ctx, t, d, func(s Status) bool { return s.AllNodesBlocked })
			mu.Lock()
			blocked = map[core.NodeID]bool{}
			mu.Unlock()
			d.kick()
			if err := f.await(ctx, "blacklist emptied", func() bool { return len(f.blacklist) == 0 }); err != nil {
				t.Fatal(err)
			}
			waitStatus(ctx, t, d, func(s Status) bool { return !s.AllNodesBlocked })
		})
	}
}

func waitStatus(ctx context.Context, t *testing.T, d *Driver, cond func(Status) bool) {
	t.Helper()
	for !cond(d.Status()) {
		select {
		case <-ctx.Done():
			t.Fatalf("status never matched: %+v", d.Status())
		case <-time.After(5 * time.Millisecond):
			d.kick()
		}
	}
}

// TestDriverContainerOnBlockedNodeReleased: a container YARN placed on a blocked node
// before the blacklist arrived is given back and the request stays.
func TestDriverContainerOnBlockedNodeReleased(t *testing.T) {
	ctx := ctxT(t)
	f := newFakeRM()
	d := newFakeDriver(t, f, nil)
	startFake(t, d, drivertest.NewRecorder(), func(n core.NodeID) bool { return n == "bad" })
	if _, err := d.RequestWorker(ctx, drivers.WorkerSpec{}); err != nil {
		t.Fatal(err)
	}
	cid := f.offer("bad", 1)
	d.kick()
	if err := f.await(ctx, "release of the container on the blocked node", func() bool { return f.released[cid] }); err != nil {
		t.Fatal(err)
	}
	if err := f.await(ctx, "bad blacklisted", func() bool { return f.blacklist["bad"] }); err != nil {
		t.Fatal(err)
	}
	good := f.offer("good", 1)
	d.kick()
	if err := f.await(ctx, "launch on the good node", func() bool { return f.launched[good] != "" }); err != nil {
		t.Fatal(err)
	}
}

func TestDriverRefusesTooLargeContainer(t *testing.T) {
	f := newFakeRM()
	d := newFakeDriver(t, f, nil)
	d.cfg.MemoryMB = 4096
	_, err := d.Start(ctxT(t), drivertest.NewRecorder(), nil)
	if !errors.Is(err, ErrResourceTooLarge) || !strings.Contains(err.Error(), "taskmanager.memory.process.size") {
		t.Fatalf("Start = %v, want ErrResourceTooLarge naming the key", err)
	}
}

func TestDriverDeregisterStatus(t *testing.T) {
	for _, tt := range []struct {
		in   drivers.FinalStatus
		want yarnpb.FinalApplicationStatusProto
	}{
		{drivers.StatusSucceeded, yarnpb.FinalApplicationStatusProto_APP_SUCCEEDED},
		{drivers.StatusFailed, yarnpb.FinalApplicationStatusProto_APP_FAILED},
		{drivers.StatusKilled, yarnpb.FinalApplicationStatusProto_APP_KILLED},
		{drivers.StatusUndefined, yarnpb.FinalApplicationStatusProto_APP_UNDEFINED},
	} {
		f := newFakeRM()
		d := newFakeDriver(t, f, nil)
		startFake(t, d, drivertest.NewRecorder(), nil)
		if err := d.Deregister(ctxT(t), tt.in, "diag"); err != nil {
			t.Fatal(err)
		}
		if len(f.finished) != 1 || f.finished[0] != tt.want {
			t.Errorf("Deregister(%s) sent %v, want %v", tt.in, f.finished, tt.want)
		}
	}
}

// TestDriverDeregisterStaging: the staging directory goes after success or cancellation,
// stays after a failure, and stays when the job's end kept a checkpoint in it (Keep), not
// when the kept checkpoint is elsewhere.
func TestDriverDeregisterStaging(t *testing.T) {
	for _, tt := range []struct {
		status drivers.FinalStatus
		keep   string // relative to the staging directory; "/": outside it
		stays  bool
	}{
		{drivers.StatusSucceeded, "", false},
		{drivers.StatusKilled, "", false},
		{drivers.StatusFailed, "", true},
		{drivers.StatusKilled, "checkpoints/j/chk-3", true},
		{drivers.StatusKilled, "/", false},
	} {
		f := newFakeRM()
		d := newFakeDriver(t, f, nil)
		s, dir := newStagingStore(t)
		d.cfg.Records = s
		startFake(t, d, drivertest.NewRecorder(), nil)
		if err := s.PublishAMAddress(ctxT(t), "am-host:6123"); err != nil { // the directory exists
			t.Fatal(err)
		}
		switch tt.keep {
		case "":
		case "/":
			d.Keep(s.Dir() + "-other/checkpoints/j/chk-3")
		default:
			d.Keep(s.Dir() + "/" + tt.keep)
		}
		if err := d.Deregister(ctxT(t), tt.status, "diag"); err != nil {
			t.Fatal(err)
		}
		_, err := os.Stat(dir)
		if stays := err == nil; stays != tt.stays {
			t.Errorf("%s, kept %q: staging directory stays = %v (%v), want %v", tt.status, tt.keep, stays, err, tt.stays)
		}
	}
}

func TestParseNodeIDFormat(t *testing.T) {
	for _, tt := range []struct {
		in   string
		want NodeIDFormat
		ok   bool
	}{{"", NodeIDHost, true}, {"host", NodeIDHost, true}, {"host-port", NodeIDHostPort, true}, {"hostname", "", false}} {
		got, err := ParseNodeIDFormat(tt.in)
		if (err == nil) != tt.ok || got != tt.want {
			t.Errorf("ParseNodeIDFormat(%q) = %q, %v", tt.in, got, err)
		}
	}
	if n := NodeIDHost.nodeOf("h:1"); n != "h" {
		t.Errorf("host of h:1 = %q", n)
	}
	if n := NodeIDHostPort.nodeOf("h:1"); n != "h:1" {
		t.Errorf("host-port of h:1 = %q", n)
	}
}
