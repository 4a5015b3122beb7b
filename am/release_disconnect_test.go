package am_test

import (
	"context"
	"log/slog"
	"net"
	"net/http"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/tidestream/tide/am"
	"github.com/tidestream/tide/conf"
	"github.com/tidestream/tide/core"
	"github.com/tidestream/tide/drivers"
	"github.com/tidestream/tide/examples"
	"github.com/tidestream/tide/internal/testkit"
	"github.com/tidestream/tide/storage"
	"github.com/tidestream/tide/stream"
	"github.com/tidestream/tide/tm/worker"
)

// containerDriver acts like the YARN driver for TaskManagers that register by
// themselves: ReleaseWorker stops the "container" and reports it terminated at once,
// before the TaskManager's process has gone (a NodeManager kills it a moment later).
type containerDriver struct {
	mu       sync.Mutex
	handler  drivers.EventHandler
	released []core.TaskManagerID
}

func (d *containerDriver) Name() string { return "containers" }
func (d *containerDriver) Start(_ context.Context, h drivers.EventHandler, _ drivers.BlockedNodes) ([]drivers.Worker, error) {
	d.mu.Lock()
	d.handler = h
	d.mu.Unlock()
	return nil, nil
}
func (d *containerDriver) RequestWorker(context.Context, drivers.WorkerSpec) (core.TaskManagerID, error) {
	return "", drivers.ErrPassive
}
func (d *containerDriver) ReleaseWorker(_ context.Context, id core.TaskManagerID) error {
	d.mu.Lock()
	d.released = append(d.released, id)
	h := d.handler
	d.mu.Unlock()
	go h.OnWorkerTerminated(id, "container stopped by the AM")
	return nil
}
func (d *containerDriver) Deregister(context.Context, drivers.FinalStatus, string) error { return nil }
func (d *containerDriver) Close(context.Context) error                                   { return nil }

// TestReleasedContainerTaskManagerExitsCleanly: a TaskManager the AM releases through a
// container driver (YARN) is told to go before its stream ends, so it exits cleanly
// instead of reconnecting and being rejected on its now-blocked node (issue 10 item 7,
// as the chaos suite saw it on YARN evacuations).
func TestReleasedContainerTaskManagerExitsCleanly(t *testing.T) {
	build, ok := stream.Lookup(examples.CheckableCountName)
	if !ok {
		t.Fatal("CheckableCount not registered")
	}
	dir := t.TempDir()
	args := []string{"--records", "100000000", "--keys", "7", "--rate", "2000", "--output", t.TempDir()}
	job, err := build(args)
	if err != nil {
		t.Fatal(err)
	}
	cfg, _, err := conf.Load("", []string{"execution-mode=reactive",
		"jobmanager.adaptive-scheduler.executing.cooldown-after-rescaling=0 s",
		"state.checkpoints.dir=file://" + dir})
	if err != nil {
		t.Fatal(err)
	}
	st, err := storage.Open(context.Background(), "file://"+dir, storage.Options{})
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
	d := &containerDriver{}
	a, err := am.New(am.Config{
		JobID: jobID, JobName: "CheckableCount", JobArgs: args, Job: job, Driver: d,
		Options: am.SchedulerOptions(cfg), Conf: cfg.Map(), Storage: st,
		CheckpointInterval: 200 * time.Millisecond, CheckpointTimeout: time.Minute, NumRetained: 2,
		HeartbeatInterval: time.Second, Logger: testkit.Logger().With("process", "am"),
		RPCListener: rpcLn, RESTListener: restLn,
	})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	t.Cleanup(func() { cancel(); wg.Wait() })
	wg.Add(1)
	go func() { defer wg.Done(); _, _ = a.Run(ctx) }()

	exits := map[string]chan error{}
	tmaLog := &messageLog{}
	for _, id := range []string{"tm-a", "tm-b"} {
		ch := make(chan error, 1)
		exits[id] = ch
		log := testkit.Logger().With("process", id)
		if id == "tm-a" {
			log = slog.New(tmaLog)
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			ch <- worker.Run(ctx, worker.Config{AMAddress: a.RPCAddr(), ID: id, NodeID: "node-" + id,
				Slots: 1, ConnectTimeout: 5 * time.Second, Logger: log})
		}()
	}
	base := "http://" + a.RESTAddr()
	testkit.WaitRunningAt(t, func(path string, v any) error { return testkit.GetJSON(ctx, base+path, v) }, jobID, 2)

	req, _ := http.NewRequestWithContext(ctx, http.MethodPut, base+"/blocklist/nodes/node-tm-a",
		strings.NewReader(`{"action":"MARK_BLOCKED_AND_EVACUATE_TASKS","cause":"test"}`))
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusCreated {
		t.Fatalf("blocking node-tm-a: %s", resp.Status)
	}
	select {
	case err := <-exits["tm-a"]:
		if err != nil {
			t.Fatalf("released TaskManager tm-a exited with %v; want a clean exit after the AM's Disconnect", err)
		}
		msgs := tmaLog.messages()
		if !slices.Contains(msgs, "the AM disconnected this TaskManager; exiting") {
			t.Errorf("tm-a never got the AM's Disconnect; its log: %q", msgs)
		}
		for _, m := range msgs {
			if strings.Contains(m, "reconnecting") || strings.Contains(m, "rejected") {
				t.Errorf("tm-a logged %q: it reconnected to the AM after being released", m)
			}
		}
	case <-time.After(2 * time.Minute):
		t.Fatal("tm-a still running two minutes after its node was blocked with evacuation")
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	if len(d.released) == 0 || d.released[0] != "tm-a" {
		t.Fatalf("driver released %v; want tm-a", d.released)
	}
}

// messageLog is a slog handler that keeps the messages logged through it.
type messageLog struct {
	mu   sync.Mutex
	msgs []string
}

func (l *messageLog) Enabled(context.Context, slog.Level) bool { return true }
func (l *messageLog) Handle(_ context.Context, r slog.Record) error {
	l.mu.Lock()
	l.msgs = append(l.msgs, r.Message)
	l.mu.Unlock()
	return nil
}
func (l *messageLog) WithAttrs([]slog.Attr) slog.Handler { return l }
func (l *messageLog) WithGroup(string) slog.Handler      { return l }
func (l *messageLog) messages() []string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return slices.Clone(l.msgs)
}
