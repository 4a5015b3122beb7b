package am

import (
	"context"
	"fmt"
	"net"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/tidestream/tide/conf"
	"github.com/tidestream/tide/core"
	"github.com/tidestream/tide/drivers"
	"github.com/tidestream/tide/examples"
	"github.com/tidestream/tide/internal/testkit"
	"github.com/tidestream/tide/stream"
)

// deregisterRecorder is a driver that starts no workers and remembers Deregister calls.
type deregisterRecorder struct {
	mu       sync.Mutex
	statuses []drivers.FinalStatus
}

func (d *deregisterRecorder) Name() string { return "recorder" }
func (d *deregisterRecorder) Start(context.Context, drivers.EventHandler, drivers.BlockedNodes) ([]drivers.Worker, error) {
	return nil, nil
}
func (d *deregisterRecorder) RequestWorker(context.Context, drivers.WorkerSpec) (core.TaskManagerID, error) {
	return "", drivers.ErrPassive
}
func (d *deregisterRecorder) ReleaseWorker(context.Context, core.TaskManagerID) error { return nil }
func (d *deregisterRecorder) Close(context.Context) error                             { return nil }
func (d *deregisterRecorder) Deregister(_ context.Context, s drivers.FinalStatus, _ string) error {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.statuses = append(d.statuses, s)
	return nil
}

// TestShutdownDeregistersOnlyFinalOutcomes: an AM that is stopped (the job ends
// SUSPENDED) must leave the application registered, so YARN starts another attempt that
// recovers the job; a cancelled job deregisters as KILLED.
func TestShutdownDeregistersOnlyFinalOutcomes(t *testing.T) {
	for _, tt := range []struct {
		name    string
		end     func(a *AM, stop context.CancelFunc)
		handOff bool
		status  core.JobStatus
		cause   string
		want    []drivers.FinalStatus
	}{
		{"stopped", func(_ *AM, stop context.CancelFunc) { stop() }, false, core.StatusSuspended, "AM shutting down", nil},
		// A Kubernetes AM pod deleted: stopped the same way, but leaving the subtasks.
		{"stopped handing off", func(_ *AM, stop context.CancelFunc) { stop() }, true, core.StatusSuspended, "the next AM adopts the running subtasks", nil},
		{"cancelled", func(a *AM, _ context.CancelFunc) { a.post(func() { a.step(core.CancelJob{}) }) }, false, core.StatusCanceled, "", []drivers.FinalStatus{drivers.StatusKilled}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			build, _ := stream.Lookup(examples.CheckableCountName)
			job, err := build([]string{"--records", "10", "--output", t.TempDir()})
			if err != nil {
				t.Fatal(err)
			}
			cfg, _, err := conf.Load("", nil)
			if err != nil {
				t.Fatal(err)
			}
			rpcLn, _ := net.Listen("tcp", "127.0.0.1:0")
			restLn, _ := net.Listen("tcp", "127.0.0.1:0")
			drv := &deregisterRecorder{}
			a, err := New(Config{JobID: testJobID, JobName: examples.CheckableCountName, Job: job,
				Options: SchedulerOptions(cfg), Conf: cfg.Map(), HeartbeatInterval: time.Second,
				Logger: testkit.Logger(), RPCListener: rpcLn, RESTListener: restLn, Driver: drv, HandOffOnStop: tt.handOff})
			if err != nil {
				t.Fatal(err)
			}
			ctx, stop := context.WithCancel(context.Background())
			defer stop()
			done := make(chan Result, 1)
			go func() { res, _ := a.Run(ctx); done <- res }()
			// End the AM only once the job waits for resources: stopping it earlier would
			// test the start-up path, not the end of a job.
			testkit.WaitFor(t, "the job waiting for resources (CREATED)", func() (bool, error) {
				var d testkit.JobDetails
				if err := testkit.GetJSON(context.Background(), "http://"+restLn.Addr().String()+"/jobs/"+testJobID, &d); err != nil {
					return false, err
				}
				return d.State == "CREATED", fmt.Errorf("job state %s", d.State)
			})
			tt.end(a, stop)
			select {
			case res := <-done:
				if res.Status != tt.status || !strings.Contains(res.Cause, tt.cause) {
					t.Fatalf("job ended %s (%s), want %s (%s)", res.Status, res.Cause, tt.status, tt.cause)
				}
			case <-time.After(30 * time.Second):
				t.Fatal("the AM did not stop")
			}
			drv.mu.Lock()
			defer drv.mu.Unlock()
			if len(drv.statuses) != len(tt.want) || (len(tt.want) > 0 && drv.statuses[0] != tt.want[0]) {
				t.Fatalf("Deregister calls %v, want %v", drv.statuses, tt.want)
			}
		})
	}
}
