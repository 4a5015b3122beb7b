package yarn

import (
	"context"
	"errors"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"google.golang.org/protobuf/proto"

	"github.com/tidestream/tide/core"
	"github.com/tidestream/tide/drivers"
	"github.com/tidestream/tide/drivers/drivertest"
	"github.com/tidestream/tide/storage"
	"github.com/tidestream/tide/yarn/yarnpb"
)

const recoverApp = "application_1700000000000_0007"

// prevContainer makes container n of attempt 1 of fakeApp on host.
func prevContainer(host string, n int64) *yarnpb.ContainerProto {
	return &yarnpb.ContainerProto{
		Id: &yarnpb.ContainerIdProto{AppAttemptId: &yarnpb.ApplicationAttemptIdProto{ApplicationId: fakeApp, AttemptId: proto.Int32(1)},
			AppId: fakeApp, Id: proto.Int64(n)},
		NodeId: &yarnpb.NodeIdProto{Host: proto.String(host), Port: proto.Int32(8041)},
	}
}

// newStagingStore is a staging directory on local disk; it returns the store and the
// application directory.
func newStagingStore(t *testing.T) (*StagingStore, string) {
	t.Helper()
	root := t.TempDir()
	st, err := storage.Open(context.Background(), "file://"+root, storage.Options{})
	if err != nil {
		t.Fatal(err)
	}
	s, err := NewStagingStore(st, recoverApp)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = s.Close() })
	return s, filepath.Join(root, recoverApp)
}

// newRecoveringDriver is attempt 2 of fakeApp: the RM reports prev at registration, and
// records name the TaskManagers in named.
func newRecoveringDriver(t *testing.T, f *fakeRM, prev []*yarnpb.ContainerProto, named map[int64]core.TaskManagerID, timeout time.Duration) (*Driver, *StagingStore, string) {
	t.Helper()
	rec, dir := newStagingStore(t)
	for n, tm := range named {
		if err := rec.RecordContainer(ctxT(t), ContainerIDString(prevContainer("x", n).GetId()), tm); err != nil {
			t.Fatal(err)
		}
	}
	f.previous = prev
	d := newFakeDriver(t, f, nil)
	d.cfg.Records, d.cfg.RecoveryTimeout = rec, timeout
	d.SetAttempt("2")
	return d, rec, dir
}

// TestDriverAdoptsPreviousContainers: containers kept from attempt 1 whose TaskManager
// the records name are recovered workers that serve the first requests without an ask;
// an unnamed one is released; the AM's address is published.
func TestDriverAdoptsPreviousContainers(t *testing.T) {
	ctx := ctxT(t)
	f := newFakeRM()
	d, _, dir := newRecoveringDriver(t, f,
		[]*yarnpb.ContainerProto{prevContainer("n1", 2), prevContainer("n2", 3), prevContainer("n2", 4)},
		map[int64]core.TaskManagerID{2: "tm-1-1", 3: "tm-1-2"}, time.Hour)
	got, err := d.Start(ctx, drivertest.NewRecorder(), nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = d.Close(context.Background()) })
	slices.SortFunc(got, func(a, b drivers.Worker) int { return strings.Compare(string(a.ID), string(b.ID)) })
	want := []drivers.Worker{{ID: "tm-1-1", Node: "n1"}, {ID: "tm-1-2", Node: "n2"}}
	if !slices.Equal(got, want) {
		t.Fatalf("recovered %v, want %v", got, want)
	}
	addr, err := os.ReadFile(filepath.Join(dir, AMAddressName))
	if err != nil || string(addr) != "am-host:6123\n" {
		t.Fatalf("AM address file = %q, %v; want am-host:6123", addr, err)
	}
	unnamed := ContainerIDString(prevContainer("n2", 4).GetId())
	if err := f.await(ctx, "release of the unnamed container", func() bool { return f.released[unnamed] }); err != nil {
		t.Fatal(err)
	}
	var ids []core.TaskManagerID
	for range 3 {
		id, err := d.RequestWorker(ctx, drivers.WorkerSpec{})
		if err != nil {
			t.Fatal(err)
		}
		ids = append(ids, id)
	}
	if !slices.Equal(ids, []core.TaskManagerID{"tm-1-1", "tm-1-2", "tm-2-1"}) {
		t.Fatalf("requests served by %v, want the two adopted TaskManagers first, then tm-2-1", ids)
	}
	if err := f.await(ctx, "an ask for 1", func() bool { return f.outstanding == 1 }); err != nil {
		t.Fatal(err)
	}
	for _, w := range want {
		if err := d.Admit(ctx, w); err != nil {
			t.Fatalf("Admit(%v) = %v", w, err)
		}
	}
	if st := d.Status(); st.Registered != 2 || st.Waiting != 1 {
		t.Fatalf("status %+v, want 2 registered and 1 waiting", st)
	}
	f.mu.Lock()
	asks := slices.Clone(f.asks)
	f.mu.Unlock()
	if slices.Max(asks) != 1 {
		t.Fatalf("asks %v: the adopted TaskManagers were asked for again", asks)
	}
}

// TestDriverReleasesPreviousContainersOnBlockedNodes: a container kept from attempt 1 on a
// node the restored blocklist blocks is released at once instead of adopted, so its
// TaskManager is not refused at registration and its container's end is no failed launch;
// the one on an unblocked node is adopted.
func TestDriverReleasesPreviousContainersOnBlockedNodes(t *testing.T) {
	ctx := ctxT(t)
	f := newFakeRM()
	d, _, _ := newRecoveringDriver(t, f,
		[]*yarnpb.ContainerProto{prevContainer("n1", 2), prevContainer("n2", 3)},
		map[int64]core.TaskManagerID{2: "tm-1-1", 3: "tm-1-2"}, time.Hour)
	blocked := func(n core.NodeID) bool { return n == "n1" }
	got, err := d.Start(ctx, drivertest.NewRecorder(), blocked)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = d.Close(context.Background()) })
	if want := []drivers.Worker{{ID: "tm-1-2", Node: "n2"}}; !slices.Equal(got, want) {
		t.Fatalf("recovered %v, want only %v", got, want)
	}
	onBlocked := ContainerIDString(prevContainer("n1", 2).GetId())
	if err := f.await(ctx, "release of the container on the blocked node", func() bool { return f.released[onBlocked] }); err != nil {
		t.Fatal(err)
	}
	id, err := d.RequestWorker(ctx, drivers.WorkerSpec{})
	if err != nil || id != "tm-1-2" {
		t.Fatalf("first request served by %q, %v; want the adopted tm-1-2", id, err)
	}
	if err := d.Admit(ctx, drivers.Worker{ID: "tm-1-1", Node: "n1"}); err == nil {
		t.Fatal("the TaskManager on the blocked node was admitted")
	}
}

// TestDriverReplacesSilentAdopted: an adopted container whose TaskManager does not
// register in time is released; a request counting on it gets a new container, one no
// request counts on is just dropped, and the late TaskManager is refused.
func TestDriverReplacesSilentAdopted(t *testing.T) {
	ctx := ctxT(t)
	f := newFakeRM()
	d, _, _ := newRecoveringDriver(t, f,
		[]*yarnpb.ContainerProto{prevContainer("n1", 2), prevContainer("n2", 3)},
		map[int64]core.TaskManagerID{2: "tm-1-1", 3: "tm-1-2"}, 50*time.Millisecond)
	rec := drivertest.NewRecorder()
	startFake(t, d, rec, nil)
	id, err := d.RequestWorker(ctx, drivers.WorkerSpec{})
	if err != nil || id != "tm-1-1" {
		t.Fatalf("RequestWorker = %s, %v; want tm-1-1", id, err)
	}
	c1, c2 := ContainerIDString(prevContainer("", 2).GetId()), ContainerIDString(prevContainer("", 3).GetId())
	err = f.await(ctx, "both adopted containers released and one replacement asked", func() bool {
		d.kick()
		return f.released[c1] && f.released[c2] && f.outstanding == 1
	})
	if err != nil {
		t.Fatal(err)
	}
	if err := d.Admit(ctx, drivers.Worker{ID: "tm-1-1", Node: "n1"}); !errors.Is(err, drivers.ErrUnknownWorker) {
		t.Fatalf("Admit of the late TaskManager = %v, want ErrUnknownWorker", err)
	}
	cid := f.offer("n3", 8041)
	d.kick()
	if err := f.await(ctx, "the replacement launched", func() bool { return f.launched[cid] != "" }); err != nil {
		t.Fatal(err)
	}
	f.mu.Lock()
	repl := f.launched[cid]
	f.mu.Unlock()
	if repl != "tm-2-1" {
		t.Fatalf("replacement TaskManager %s, want tm-2-1", repl)
	}
	if got := rec.Terminated(); len(got) != 0 {
		t.Fatalf("terminated %v: the core never had the silent TaskManagers", got)
	}
}

// TestDriverAdoptedContainerCompletes: an adopted container ending before its TaskManager
// registered is replaced when a request counts on it and forgotten otherwise.
func TestDriverAdoptedContainerCompletes(t *testing.T) {
	ctx := ctxT(t)
	f := newFakeRM()
	d, _, _ := newRecoveringDriver(t, f,
		[]*yarnpb.ContainerProto{prevContainer("n1", 2), prevContainer("n2", 3)},
		map[int64]core.TaskManagerID{2: "tm-1-1", 3: "tm-1-2"}, time.Hour)
	startFake(t, d, drivertest.NewRecorder(), nil)
	if id, err := d.RequestWorker(ctx, drivers.WorkerSpec{}); err != nil || id != "tm-1-1" {
		t.Fatalf("RequestWorker = %s, %v; want tm-1-1", id, err)
	}
	f.kill(ContainerIDString(prevContainer("", 2).GetId()), 137)
	f.kill(ContainerIDString(prevContainer("", 3).GetId()), 137)
	d.kick()
	waitStatus(ctx, t, d, func(s Status) bool { return s.Waiting == 1 && s.Launched == 0 })
	if err := f.await(ctx, "an ask for the claimed one", func() bool { return f.outstanding == 1 }); err != nil {
		t.Fatal(err)
	}
	// The unclaimed one is gone: the next request asks YARN too.
	if id, err := d.RequestWorker(ctx, drivers.WorkerSpec{}); err != nil || id != "tm-2-1" {
		t.Fatalf("RequestWorker = %s, %v; want tm-2-1", id, err)
	}
}

// TestDriverRecordsLaunchesAndRemovesStaging: every launch is recorded before the start,
// and the staging directory goes when the application succeeded or was cancelled, not
// when it failed.
func TestDriverRecordsLaunchesAndRemovesStaging(t *testing.T) {
	for _, tt := range []struct {
		status drivers.FinalStatus
		gone   bool
	}{
		{drivers.StatusSucceeded, true},
		{drivers.StatusKilled, true},
		{drivers.StatusFailed, false},
		{drivers.StatusUndefined, false},
	} {
		t.Run(string(tt.status), func(t *testing.T) {
			ctx := ctxT(t)
			f := newFakeRM()
			rec, dir := newStagingStore(t)
			d := newFakeDriver(t, f, nil)
			d.cfg.Records = rec
			startFake(t, d, drivertest.NewRecorder(), nil)
			id, err := d.RequestWorker(ctx, drivers.WorkerSpec{})
			if err != nil {
				t.Fatal(err)
			}
			cid := f.offer("n1", 8041)
			d.kick()
			if err := f.await(ctx, "launch", func() bool { return f.launched[cid] != "" }); err != nil {
				t.Fatal(err)
			}
			if got, err := rec.ContainerTaskManager(ctx, cid); err != nil || got != id {
				t.Fatalf("record of %s = %s, %v; want %s", cid, got, err, id)
			}
			if err := d.Deregister(ctx, tt.status, "done"); err != nil {
				t.Fatal(err)
			}
			_, err = os.Stat(dir)
			if gone := errors.Is(err, os.ErrNotExist); gone != tt.gone {
				t.Fatalf("after %s the staging directory gone = %v (%v), want %v", tt.status, gone, err, tt.gone)
			}
		})
	}
}

func TestStagingStoreRecords(t *testing.T) {
	ctx := ctxT(t)
	s, dir := newStagingStore(t)
	cid := "container_1700000000000_0007_01_000002"
	if _, err := s.ContainerTaskManager(ctx, cid); !errors.Is(err, errNoRecord) {
		t.Fatalf("missing record = %v, want errNoRecord", err)
	}
	for _, bad := range []string{"../x", "container_x", ""} {
		if err := s.RecordContainer(ctx, bad, "tm"); err == nil {
			t.Errorf("RecordContainer(%q) accepted", bad)
		}
	}
	if err := os.MkdirAll(filepath.Join(dir, containersDir), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, containersDir, "container_1700000000000_0007_01_000003"), []byte("a b\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := s.ContainerTaskManager(ctx, "container_1700000000000_0007_01_000003"); err == nil {
		t.Fatal("a record of two words was accepted")
	}
	if err := s.PublishAMAddress(ctx, "no-port"); err == nil {
		t.Fatal("PublishAMAddress accepted an address without a port")
	}
	for _, addr := range []string{"h1:1", "h2:2"} {
		if err := s.PublishAMAddress(ctx, addr); err != nil {
			t.Fatal(err)
		}
		r, err := s.st.Open(ctx, recoverApp+"/"+AMAddressName)
		if err != nil {
			t.Fatal(err)
		}
		b, _ := io.ReadAll(r)
		r.Close()
		if string(b) != addr+"\n" {
			t.Fatalf("address file %q, want %q", b, addr)
		}
	}
	if got, want := s.AMAddressURI(), s.st.URI()+"/"+recoverApp+"/am-address"; got != want {
		t.Fatalf("AMAddressURI = %s, want %s", got, want)
	}
	if _, err := NewStagingStore(s.st, "a/b"); err == nil {
		t.Fatal("NewStagingStore accepted a nested directory")
	}
}
