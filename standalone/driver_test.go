package standalone

import (
	"context"
	"errors"
	"testing"

	"github.com/tidestream/tide/drivers"
	"github.com/tidestream/tide/drivers/drivertest"
	"go.uber.org/goleak"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

func TestConformance(t *testing.T) {
	drivertest.Suite(t, func(t *testing.T) drivertest.Harness {
		d := New(nil)
		return drivertest.Harness{Driver: d, Join: d.Admit, KeepsBlocked: true}
	})
}

// TestReleaseTerminates: a released worker is reported terminated and is unknown from then on.
func TestReleaseTerminates(t *testing.T) {
	d := New(nil)
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
	if err := d.ReleaseWorker(ctx, "tm-1"); !errors.Is(err, drivers.ErrUnknownWorker) {
		t.Fatalf("second ReleaseWorker = %v, want ErrUnknownWorker", err)
	}
	if err := d.Close(ctx); err != nil {
		t.Fatal(err)
	}
}

func TestForget(t *testing.T) {
	d := New(nil)
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
