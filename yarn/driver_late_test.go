package yarn

import (
	"context"
	"errors"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/tidestream/tide/core"
	"github.com/tidestream/tide/drivers"
	"github.com/tidestream/tide/drivers/drivertest"
	"github.com/tidestream/tide/yarn/yarnpb"
)

// requestN makes n requests and returns the ids that serve them.
func requestN(ctx context.Context, t *testing.T, d *Driver, n int) []core.TaskManagerID {
	t.Helper()
	var ids []core.TaskManagerID
	for range n {
		id, err := d.RequestWorker(ctx, drivers.WorkerSpec{})
		if err != nil {
			t.Fatal(err)
		}
		ids = append(ids, id)
	}
	return ids
}

// workerOf is a copy of the driver's worker id (nil when the driver has none).
func workerOf(d *Driver, id core.TaskManagerID) *worker {
	d.mu.Lock()
	defer d.mu.Unlock()
	w, ok := d.workers[id]
	if !ok {
		return nil
	}
	c := *w
	return &c
}

// maxAsk is the largest ask the driver sent.
func maxAsk(f *fakeRM) int32 {
	f.mu.Lock()
	defer f.mu.Unlock()
	if len(f.asks) == 0 {
		return 0
	}
	return slices.Max(f.asks)
}

// TestDriverAdoptsLateReportedContainers: the RM reports one of two kept containers at
// registration and the other with an allocate. The recorded one is expected meanwhile
// and serves a request without an ask; when the RM reports it, it is adopted with its
// node. A kept container recorded after Start (so not expected) reported late is adopted
// too and serves the next request.
func TestDriverAdoptsLateReportedContainers(t *testing.T) {
	ctx := ctxT(t)
	f := newFakeRM()
	d, rec, _ := newRecoveringDriver(t, f, []*yarnpb.ContainerProto{prevContainer("n1", 2)},
		map[int64]core.TaskManagerID{2: "tm-1-1", 3: "tm-1-2"}, time.Hour)
	d.cfg.AdoptionGrace = time.Hour
	got, err := d.Start(ctx, drivertest.NewRecorder(), nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = d.Close(context.Background()) })
	if want := []drivers.Worker{{ID: "tm-1-1", Node: "n1"}}; !slices.Equal(got, want) {
		t.Fatalf("recovered %v, want %v (the RM reported one container)", got, want)
	}
	if ids := requestN(ctx, t, d, 2); !slices.Equal(ids, []core.TaskManagerID{"tm-1-1", "tm-1-2"}) {
		t.Fatalf("requests served by %v, want the reported and the expected TaskManager", ids)
	}
	if w := workerOf(d, "tm-1-2"); w == nil || !w.expected || !w.claimed {
		t.Fatalf("tm-1-2 = %+v, want expected and claimed", w)
	}
	f.mu.Lock()
	f.late = []*yarnpb.ContainerProto{prevContainer("n2", 3)}
	f.mu.Unlock()
	d.kick()
	waitWorker(ctx, t, d, "tm-1-2", "adopted on n2", func(w *worker) bool { return !w.expected && w.node == "n2" })

	// Recorded after Start, so not expected: reported late, it serves the next request.
	c4 := prevContainer("n3", 4)
	if err := rec.RecordContainer(ctx, ContainerIDString(c4.GetId()), "tm-1-3"); err != nil {
		t.Fatal(err)
	}
	f.mu.Lock()
	f.late = []*yarnpb.ContainerProto{c4, prevContainer("n2", 3)} // 3 again: no double adoption
	f.mu.Unlock()
	d.kick()
	waitWorker(ctx, t, d, "tm-1-3", "adopted on n3", func(w *worker) bool { return w.adopted && w.node == "n3" })
	if ids := requestN(ctx, t, d, 2); !slices.Equal(ids, []core.TaskManagerID{"tm-1-3", "tm-2-1"}) {
		t.Fatalf("requests served by %v, want the late-reported tm-1-3, then a new tm-2-1", ids)
	}
	if err := f.await(ctx, "an ask for 1", func() bool { return f.outstanding == 1 }); err != nil {
		t.Fatal(err)
	}
	if m := maxAsk(f); m != 1 {
		t.Fatalf("largest ask %d, want 1: a kept container was asked for again", m)
	}
	for _, w := range []drivers.Worker{{ID: "tm-1-1", Node: "n1"}, {ID: "tm-1-2", Node: "n2"}, {ID: "tm-1-3", Node: "n3"}} {
		if err := d.Admit(ctx, w); err != nil {
			t.Fatalf("Admit(%v) = %v", w, err)
		}
	}
	if st := d.Status(); st.Registered != 3 || st.Waiting != 1 {
		t.Fatalf("status %+v, want 3 registered and 1 waiting", st)
	}
}

// TestDriverExpectedTaskManagerRegisters: a recorded container the RM never reports is
// adopted when its TaskManager registers, even after the grace; when its container
// completes the TaskManager is lost and the record is deleted.
func TestDriverExpectedTaskManagerRegisters(t *testing.T) {
	ctx := ctxT(t)
	f := newFakeRM()
	d, rec, _ := newRecoveringDriver(t, f, []*yarnpb.ContainerProto{prevContainer("n1", 2)},
		map[int64]core.TaskManagerID{2: "tm-1-1", 3: "tm-1-2"}, time.Hour)
	d.cfg.AdoptionGrace = 10 * time.Millisecond
	r := drivertest.NewRecorder()
	startFake(t, d, r, nil)
	if ids := requestN(ctx, t, d, 2); !slices.Equal(ids, []core.TaskManagerID{"tm-1-1", "tm-1-2"}) {
		t.Fatalf("requests served by %v, want the reported and the expected TaskManager", ids)
	}
	if err := d.Admit(ctx, drivers.Worker{ID: "tm-1-2", Node: "n2"}); err != nil {
		t.Fatalf("Admit of the expected TaskManager = %v", err)
	}
	// The grace passes: the registered one stays.
	waitGraceClosed(ctx, t, d, f)
	if w := workerOf(d, "tm-1-2"); w == nil || w.expected || w.state != stateRegistered || w.node != "n2" {
		t.Fatalf("tm-1-2 after the grace = %+v, want registered on n2", w)
	}
	if m := maxAsk(f); m != 0 {
		t.Fatalf("largest ask %d, want none", m)
	}
	c3 := ContainerIDString(prevContainer("", 3).GetId())
	f.kill(c3, 137)
	d.kick()
	if err := r.WaitTerminated(ctx, "tm-1-2"); err != nil {
		t.Fatal(err)
	}
	waitNoRecord(ctx, t, d, rec, c3)
}

// TestDriverExpectedGraceExpires: recorded containers neither reported nor registered
// within the grace are forgotten, their records deleted and their TaskManagers refused;
// a request that counted on one gets a new container, an unclaimed one is just dropped.
func TestDriverExpectedGraceExpires(t *testing.T) {
	ctx := ctxT(t)
	f := newFakeRM()
	d, rec, _ := newRecoveringDriver(t, f, []*yarnpb.ContainerProto{prevContainer("n1", 2)},
		map[int64]core.TaskManagerID{2: "tm-1-1", 3: "tm-1-2", 4: "tm-1-3"}, time.Hour)
	d.cfg.AdoptionGrace = 20 * time.Millisecond
	r := drivertest.NewRecorder()
	startFake(t, d, r, nil)
	if ids := requestN(ctx, t, d, 2); !slices.Equal(ids, []core.TaskManagerID{"tm-1-1", "tm-1-2"}) {
		t.Fatalf("requests served by %v, want tm-1-1 and the expected tm-1-2", ids)
	}
	if err := f.await(ctx, "one replacement asked", func() bool { d.kick(); return f.outstanding == 1 }); err != nil {
		t.Fatal(err)
	}
	f.mu.Lock()
	beats := f.allocates
	f.mu.Unlock()
	if beats <= d.cfg.AdoptionGraceHeartbeats {
		t.Fatalf("the grace closed after %d allocates, want more than %d", beats, d.cfg.AdoptionGraceHeartbeats)
	}
	for _, n := range []int64{3, 4} {
		waitNoRecord(ctx, t, d, rec, ContainerIDString(prevContainer("", n).GetId()))
	}
	for _, id := range []core.TaskManagerID{"tm-1-2", "tm-1-3"} {
		if err := d.Admit(ctx, drivers.Worker{ID: id, Node: "n2"}); !errors.Is(err, drivers.ErrUnknownWorker) {
			t.Fatalf("Admit of the forgotten %s = %v, want ErrUnknownWorker", id, err)
		}
	}
	if ids := requestN(ctx, t, d, 1); ids[0] != "tm-2-2" {
		t.Fatalf("next request served by %v, want a new tm-2-2 (tm-2-1 replaces tm-1-2)", ids)
	}
	if err := f.await(ctx, "an ask for 2", func() bool { return f.outstanding == 2 }); err != nil {
		t.Fatal(err)
	}
	if got := r.Terminated(); len(got) != 0 {
		t.Fatalf("terminated %v: the core never had the forgotten TaskManagers", got)
	}
}

// TestDriverReleasesExpected: releasing an expected TaskManager reports it gone at once
// and gives its container id back in case it lives.
func TestDriverReleasesExpected(t *testing.T) {
	ctx := ctxT(t)
	f := newFakeRM()
	d, _, _ := newRecoveringDriver(t, f, nil, map[int64]core.TaskManagerID{3: "tm-1-2"}, time.Hour)
	d.cfg.AdoptionGrace = time.Hour
	r := drivertest.NewRecorder()
	startFake(t, d, r, nil)
	if ids := requestN(ctx, t, d, 1); ids[0] != "tm-1-2" {
		t.Fatalf("request served by %v, want the expected tm-1-2", ids)
	}
	if err := d.ReleaseWorker(ctx, "tm-1-2"); err != nil {
		t.Fatal(err)
	}
	if err := r.WaitTerminated(ctx, "tm-1-2"); err != nil {
		t.Fatal(err)
	}
	c3 := ContainerIDString(prevContainer("", 3).GetId())
	if err := f.await(ctx, "release of "+c3, func() bool { return f.released[c3] }); err != nil {
		t.Fatal(err)
	}
}

func waitWorker(ctx context.Context, t *testing.T, d *Driver, id core.TaskManagerID, what string, cond func(*worker) bool) {
	t.Helper()
	for {
		if w := workerOf(d, id); w != nil && cond(w) {
			return
		}
		select {
		case <-ctx.Done():
			t.Fatalf("TaskManager %s never %s: %+v", id, what, workerOf(d, id))
		case <-time.After(time.Millisecond):
		}
	}
}

func waitGraceClosed(ctx context.Context, t *testing.T, d *Driver, f *fakeRM) {
	t.Helper()
	err := f.await(ctx, "the adoption grace to close", func() bool {
		d.kick()
		d.mu.Lock()
		defer d.mu.Unlock()
		return !d.graceOpen
	})
	if err != nil {
		t.Fatal(err)
	}
}

func waitNoRecord(ctx context.Context, t *testing.T, d *Driver, rec *StagingStore, cid string) {
	t.Helper()
	for {
		_, err := rec.ContainerTaskManager(ctx, cid)
		if errors.Is(err, errNoRecord) {
			return
		}
		d.kick()
		select {
		case <-ctx.Done():
			t.Fatalf("the record of %s was never deleted: %v", cid, err)
		case <-time.After(time.Millisecond):
		}
	}
}

// TestStagingStoreContainerRecords: ContainerRecords lists what RecordContainer wrote,
// skipping names that are no container id and reporting unreadable records; an empty
// staging directory has none; ForgetContainer deletes one and tolerates a missing one.
func TestStagingStoreContainerRecords(t *testing.T) {
	ctx := ctxT(t)
	s, dir := newStagingStore(t)
	if got, err := s.ContainerRecords(ctx); err != nil || len(got) != 0 {
		t.Fatalf("records of an empty staging directory = %v, %v; want none", got, err)
	}
	c2, c3 := ContainerIDString(prevContainer("", 2).GetId()), ContainerIDString(prevContainer("", 3).GetId())
	for cid, tm := range map[string]core.TaskManagerID{c2: "tm-1-1", c3: "tm-1-2"} {
		if err := s.RecordContainer(ctx, cid, tm); err != nil {
			t.Fatal(err)
		}
	}
	for name, content := range map[string]string{"stray.txt": "tm-x\n", ContainerIDString(prevContainer("", 4).GetId()): "two words\n"} {
		if err := os.WriteFile(filepath.Join(dir, containersDir, name), []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	got, err := s.ContainerRecords(ctx)
	if err == nil {
		t.Fatal("an unreadable record was not reported")
	}
	if want := map[string]core.TaskManagerID{c2: "tm-1-1", c3: "tm-1-2"}; !maps.Equal(got, want) {
		t.Fatalf("records = %v, want %v", got, want)
	}
	for _, tt := range []struct {
		cid     string
		wantErr bool
	}{{c2, false}, {c2, false}, {"../x", true}} {
		if err := s.ForgetContainer(ctx, tt.cid); (err != nil) != tt.wantErr {
			t.Fatalf("ForgetContainer(%q) = %v, want error %v", tt.cid, err, tt.wantErr)
		}
	}
	if _, err := s.ContainerTaskManager(ctx, c2); !errors.Is(err, errNoRecord) {
		t.Fatalf("record of %s after ForgetContainer: %v, want errNoRecord", c2, err)
	}
}
