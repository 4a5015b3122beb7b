package am_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"reflect"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/tidestream/tide/am"
	"github.com/tidestream/tide/conf"
	"github.com/tidestream/tide/core"
	"github.com/tidestream/tide/examples"
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
	interval time.Duration
}

func testLogger(t *testing.T) *slog.Logger {
	if os.Getenv("TIDE_TEST_LOG") != "" {
		return slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelDebug}))
	}
	return slog.New(slog.DiscardHandler)
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
	dyn := append([]string{"execution-mode=reactive",
		"jobmanager.adaptive-scheduler.executing.cooldown-after-rescaling=0 s",
		"jobmanager.adaptive-scheduler.executing.resource-stabilization-timeout=0 s",
		"restart-strategy.type=fixed-delay", "restart-strategy.fixed-delay.attempts=100",
		"restart-strategy.fixed-delay.delay=10 ms",
		"state.checkpoints.dir=file://" + o.ckptDir,
		"execution.checkpointing.interval=" + o.interval.String()}, o.dynamic...)
	cfg, _, err := conf.Load("", dyn)
	if err != nil {
		t.Fatal(err)
	}
	st, err := storage.Open(context.Background(), "file://"+o.ckptDir, storage.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	rpcLn, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	restLn, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	a, err := am.New(am.Config{
		JobID: "0123456789abcdef0123456789abcdef", JobName: o.job, JobArgs: o.args, Job: job,
		Options: am.SchedulerOptions(cfg), Conf: cfg.Map(), Storage: st,
		CheckpointInterval: o.interval, CheckpointTimeout: time.Minute, NumRetained: 2,
		HeartbeatInterval: time.Second, Logger: testLogger(t).With("process", "am"),
		RPCListener: rpcLn, RESTListener: restLn,
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
			ConnectTimeout: 5 * time.Second, Logger: testLogger(c.t).With("process", id)})
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

func (c *cluster) getJSON(path string, v any) error {
	resp, err := http.Get("http://" + c.am.RESTAddr() + path)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		return err
	}
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("GET %s: %s: %s", path, resp.Status, body)
	}
	return json.Unmarshal(body, v)
}

type jobInfo struct {
	State    string `json:"state"`
	Attempt  int64  `json:"attempt"`
	Vertices []struct {
		ID          string `json:"id"`
		Parallelism int    `json:"parallelism"`
	} `json:"vertices"`
}

const jobID = "0123456789abcdef0123456789abcdef"

// waitFor polls cond until it holds; the deadline only guards against hangs.
func waitFor(t *testing.T, what string, cond func() (bool, error)) {
	t.Helper()
	deadline := time.Now().Add(60 * time.Second)
	var last error
	for time.Now().Before(deadline) {
		ok, err := cond()
		if ok {
			return
		}
		last = err
		time.Sleep(20 * time.Millisecond)
	}
	t.Fatalf("timed out waiting for %s (last error: %v)", what, last)
}

func (c *cluster) waitRunningAt(t *testing.T, parallelism int) jobInfo {
	t.Helper()
	var info jobInfo
	waitFor(t, fmt.Sprintf("job RUNNING at parallelism %d", parallelism), func() (bool, error) {
		if err := c.getJSON("/jobs/"+jobID, &info); err != nil {
			return false, err
		}
		if info.State != string(core.StatusRunning) || len(info.Vertices) == 0 {
			return false, fmt.Errorf("state %s", info.State)
		}
		for _, v := range info.Vertices {
			if v.Parallelism != parallelism {
				return false, fmt.Errorf("vertex %s at %d", v.ID, v.Parallelism)
			}
		}
		return true, nil
	})
	return info
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

	var res am.Result
	select {
	case res = <-c.result:
	case <-time.After(2 * time.Minute):
		t.Fatal("job did not finish")
	}
	if res.Status != core.StatusFinished {
		t.Fatalf("job ended %s: %s", res.Status, res.Cause)
	}
	got, err := examples.ReadCommittedOutput(out)
	if err != nil {
		t.Fatal(err)
	}
	want, err := examples.ExpectedOutput(args)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("output differs from the exact answer:\n got %v\nwant %v", got, want)
	}
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
