package am_test

import (
	"context"
	"net"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/tidestream/tide/am"
	"github.com/tidestream/tide/conf"
	"github.com/tidestream/tide/core"
	"github.com/tidestream/tide/examples"
	"github.com/tidestream/tide/internal/testkit"
	"github.com/tidestream/tide/storage"
	"github.com/tidestream/tide/stream"
	"github.com/tidestream/tide/tm/worker"
)

// cluster is an AM and TaskManagers in this test process, over loopback gRPC and TCP.
type cluster struct {
	t      *testing.T
	am     *am.AM
	ctx    context.Context
	cancel context.CancelFunc
	result chan am.Result
	wg     sync.WaitGroup

	mu  sync.Mutex
	tms map[string]context.CancelFunc
}

type clusterOptions struct {
	job      string
	args     []string
	dynamic  []string
	ckptDir  string
	interval time.Duration // periodic checkpoints (0: only those triggered over REST)
	// adaptive runs the job in the default (non-reactive) mode: its parallelism follows
	// its resource requirements, with no submission stabilization wait.
	adaptive bool
	// noCheckpointConf leaves execution.checkpointing.interval out of the configuration,
	// so rescales do not wait for a completed checkpoint; interval still drives the
	// checkpoint coordinator.
	noCheckpointConf bool
	retained         int    // checkpoints retained (0: 2)
	fromSavepoint    string // savepoint the job starts from ("": fresh)
	// wrap, when set, wraps the AM's checkpoint storage (to stall or break it).
	wrap func(storage.Storage) storage.Storage
}

// settings are the -D settings of a cluster: rescale at once, restart quickly.
func (o clusterOptions) settings() []string {
	var dyn []string
	if o.adaptive {
		dyn = append(dyn, "jobmanager.adaptive-scheduler.submission.resource-stabilization-timeout=0 s")
	} else {
		dyn = append(dyn, "execution-mode=reactive")
	}
	dyn = append(dyn,
		"jobmanager.adaptive-scheduler.executing.cooldown-after-rescaling=0 s",
		"jobmanager.adaptive-scheduler.executing.resource-stabilization-timeout=0 s",
		"restart-strategy.type=fixed-delay", "restart-strategy.fixed-delay.attempts=100",
		"restart-strategy.fixed-delay.delay=10 ms",
		"state.checkpoints.dir=file://"+o.ckptDir)
	if !o.noCheckpointConf {
		dyn = append(dyn, "execution.checkpointing.interval="+o.interval.String())
	}
	return append(dyn, o.dynamic...)
}

func startCluster(t *testing.T, o clusterOptions) *cluster {
	t.Helper()
	build, ok := stream.Lookup(o.job)
	if !ok {
		t.Fatalf("job %s not registered", o.job)
	}
	job, err := build(o.args)
	if err != nil {
		t.Fatal(err)
	}
	cfg, _, err := conf.Load("", o.settings())
	if err != nil {
		t.Fatal(err)
	}
	st, err := storage.Open(context.Background(), "file://"+o.ckptDir, storage.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	if o.wrap != nil {
		st = o.wrap(st)
	}
	rpcLn, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	restLn, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	retained := o.retained
	if retained == 0 {
		retained = 2
	}
	a, err := am.New(am.Config{
		JobID: jobID, JobName: o.job, JobArgs: o.args, Job: job,
		Options: am.SchedulerOptions(cfg), Conf: cfg.Map(), Storage: st,
		CheckpointInterval: o.interval, CheckpointTimeout: time.Minute, NumRetained: retained,
		HeartbeatInterval: time.Second, Logger: testkit.Logger().With("process", "am"),
		RPCListener: rpcLn, RESTListener: restLn, FromSavepoint: o.fromSavepoint,
	})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	c := &cluster{t: t, am: a, ctx: ctx, cancel: cancel, result: make(chan am.Result, 1), tms: map[string]context.CancelFunc{}}
	c.wg.Add(1)
	go func() {
		defer c.wg.Done()
		res, err := a.Run(ctx)
		if err != nil {
			t.Errorf("AM: %v", err)
		}
		c.result <- res
	}()
	t.Cleanup(c.stop)
	return c
}

func (c *cluster) addTM(id string, slots int) {
	ctx, cancel := context.WithCancel(c.ctx)
	c.mu.Lock()
	c.tms[id] = cancel
	c.mu.Unlock()
	c.wg.Add(1)
	go func() {
		defer c.wg.Done()
		err := worker.Run(ctx, worker.Config{AMAddress: c.am.RPCAddr(), ID: id, NodeID: "node-" + id, Slots: slots,
			ConnectTimeout: 5 * time.Second, Logger: testkit.Logger().With("process", id)})
		if err != nil {
			c.t.Logf("TaskManager %s: %v", id, err)
		}
	}()
}

// stopTM stops a TaskManager the way SIGTERM does.
func (c *cluster) stopTM(id string) {
	c.mu.Lock()
	cancel := c.tms[id]
	c.mu.Unlock()
	cancel()
}

func (c *cluster) stop() {
	c.cancel()
	c.wg.Wait()
}

// getJSON reads path of the AM's REST API into v.
func (c *cluster) getJSON(path string, v any) error {
	return testkit.GetJSON(context.Background(), "http://"+c.am.RESTAddr()+path, v)
}

const jobID = "0123456789abcdef0123456789abcdef"

// waitEnded waits up to timeout for the AM to end the job with status want.
func (c *cluster) waitEnded(t *testing.T, timeout time.Duration, want core.JobStatus) {
	t.Helper()
	select {
	case res := <-c.result:
		if res.Status != want {
			t.Fatalf("job ended %s (%s), want %s", res.Status, res.Cause, want)
		}
	case <-time.After(timeout):
		t.Fatalf("job did not end %s within %s", want, timeout)
	}
}

func (c *cluster) waitRunningAt(t *testing.T, parallelism int) testkit.JobDetails {
	t.Helper()
	return testkit.WaitRunningAt(t, c.getJSON, jobID, parallelism)
}

func TestCheckableCountExactlyOnceAcrossRescales(t *testing.T) {
	out := t.TempDir()
	args := []string{"--records", "300000", "--keys", "7", "--rate", "40000", "--output", out}
	c := startCluster(t, clusterOptions{job: examples.CheckableCountName, args: args, ckptDir: t.TempDir(), interval: 100 * time.Millisecond})
	c.addTM("tm-a", 1)
	c.addTM("tm-b", 1)
	c.waitRunningAt(t, 2)
	c.addTM("tm-c", 1)
	c.waitRunningAt(t, 3)
	c.stopTM("tm-b")
	c.waitRunningAt(t, 2)

	c.waitEnded(t, 2*time.Minute, core.StatusFinished)
	testkit.CheckExactOutput(t, out, args)
}

func TestRESTUnknownJob(t *testing.T) {
	c := startCluster(t, clusterOptions{job: examples.CheckableCountName,
		args: []string{"--records", "10", "--output", t.TempDir()}, ckptDir: t.TempDir(), interval: time.Second})
	var body map[string][]string
	err := c.getJSON("/jobs/ffffffffffffffffffffffffffffffff", &body)
	if err == nil || !strings.Contains(err.Error(), "404 Not Found") {
		t.Fatalf("GET unknown job = %v, want 404", err)
	}
	var st map[string]string
	if err := c.getJSON("/jobs/"+jobID+"/status", &st); err != nil {
		t.Fatal(err)
	}
	if st["status"] == "" {
		t.Fatalf("status body %v has no status", st)
	}
}
