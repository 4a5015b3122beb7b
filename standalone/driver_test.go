package standalone

import (
	"context"
	"errors"
	"sync"
	"testing"

	"github.com/tidestream/tide/core"
	"github.com/tidestream/tide/drivers"
	"github.com/tidestream/tide/drivers/drivertest"
	"go.uber.org/goleak"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

func TestConformance(t *testing.T) {
	drivertest.Suite(t, func(t *testing.T) drivertest.Harness {
		d := New(func(context.Context, core.TaskManagerID, string) error { return nil }, nil)
		return drivertest.Harness{Driver: d, Join: d.Admit, KeepsBlocked: true}
	})
}

func TestReleaseDisconnects(t *testing.T) {
	var mu sync.Mutex
	var disconnected []core.TaskManagerID
	d := New(func(_ context.Context, id core.TaskManagerID, _ string) error {
		mu.Lock()
		disconnected = append(disconnected, id)
		mu.Unlock()
		return errors.New("stream already gone")
	}, nil)
	ctx := context.Background()
	rec := drivertest.NewRecorder()
	if _, err := d.Start(ctx, rec, nil); err != nil {
		t.Fatal(err)
	}
	if err := d.Admit(ctx, drivers.Worker{ID: "tm-1", Node: "n1"}); err != nil {
		t.Fatal(err)
	}
	if err := d.ReleaseWorker(ctx, "tm-1"); err != nil {
		t.Fatal(err)
	}
	if err := rec.WaitTerminated(ctx, "tm-1"); err != nil {
		t.Fatal(err)
	}
	if err := d.Close(ctx); err != nil {
		t.Fatal(err)
	}
	mu.Lock()
	defer mu.Unlock()
	if len(disconnected) != 1 || disconnected[0] != "tm-1" {
		t.Fatalf("disconnected = %v, want [tm-1]", disconnected)
	}
}

func TestForget(t *testing.T) {
	d := New(nil, nil)
	ctx := context.Background()
	if _, err := d.Start(ctx, drivertest.NewRecorder(), nil); err != nil {
		t.Fatal(err)
	}
	if err := d.Admit(ctx, drivers.Worker{ID: "tm-1", Node: "n1"}); err != nil {
		t.Fatal(err)
	}
	d.Forget("tm-1")
	if err := d.ReleaseWorker(ctx, "tm-1"); !errors.Is(err, drivers.ErrUnknownWorker) {
		t.Fatalf("ReleaseWorker after Forget = %v, want ErrUnknownWorker", err)
	}
}
