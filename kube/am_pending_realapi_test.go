package kube_test

import (
	"bytes"
	"context"
	"fmt"
	"log/slog"
	"net"
	"strings"
	"sync"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/tidestream/tide/am"
	"github.com/tidestream/tide/api"
	"github.com/tidestream/tide/conf"
	"github.com/tidestream/tide/examples"
	"github.com/tidestream/tide/internal/testkit"
	"github.com/tidestream/tide/kube"
	"github.com/tidestream/tide/storage"
	"github.com/tidestream/tide/stream"
	"github.com/tidestream/tide/test/kube/kubetest"
)

// lockedBuffer is a log sink for the AM's goroutines.
type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

// TestRealAPIAMShowsUnschedulableReason: an AM on the kube driver asks for TaskManager pods
// that fit on no node (more cpu than any node has); the real scheduler says why, and the
// AM's log and GET /taskmanagers (pendingWorkers, what `tide taskmanagers` prints) carry
// the scheduler's reason and message.
func TestRealAPIAMShowsUnschedulableReason(t *testing.T) {
	env := kubetest.Load(t)
	cs := env.Client(t)
	ns := env.Namespace(t)
	build, ok := stream.Lookup(examples.CheckableCountName)
	if !ok {
		t.Fatal("CheckableCount not registered")
	}
	args := []string{"--records", "1000", "--keys", "3", "--output", t.TempDir()}
	job, err := build(args)
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	cfg, _, err := conf.Load("", []string{"state.checkpoints.dir=file://" + dir})
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
	logs := &lockedBuffer{}
	log := slog.New(slog.NewTextHandler(logs, nil))
	d, err := kube.NewDriver(kube.DriverConfig{Client: cs, Namespace: ns, Logger: log, Pod: kube.PodSpec{
		ClusterID: "toobig", Image: "tide:test", NodeNameLabel: "kubernetes.io/hostname",
		Command: []string{"/bin/false"}, ConfDir: "/opt/tide/conf",
		CPU: 1000, MemoryMB: 256, AMHost: "127.0.0.1", AMPort: rpcLn.Addr().(*net.TCPAddr).Port,
	}})
	if err != nil {
		t.Fatal(err)
	}
	opts := am.SchedulerOptions(cfg)
	if opts.ActiveWorkers, err = am.ActiveWorkerOptions(cfg); err != nil {
		t.Fatal(err)
	}
	a, err := am.New(am.Config{
		JobID: "0123456789abcdef0123456789abcdef", JobName: "CheckableCount", JobArgs: args, Job: job, Driver: d,
		Options: opts, Conf: cfg.Map(), Storage: st,
		CheckpointInterval: time.Second, CheckpointTimeout: time.Minute, NumRetained: 1,
		HeartbeatInterval: time.Second, Logger: log, RPCListener: rpcLn, RESTListener: restLn,
	})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	t.Cleanup(func() { cancel(); wg.Wait() })
	wg.Add(1)
	go func() { defer wg.Done(); _, _ = a.Run(ctx) }()

	c, err := api.NewClient(api.Config{Address: a.RESTAddr()})
	if err != nil {
		t.Fatal(err)
	}
	var pw []api.PendingWorker
	testkit.WaitFor(t, "GET /taskmanagers listing an Unschedulable pending TaskManager", func() (bool, error) {
		all, err := c.TaskManagersAndPending(ctx)
		if err != nil {
			return false, err
		}
		pw = all.PendingWorkers
		for _, p := range pw {
			if p.Reason == "Unschedulable" {
				return true, nil
			}
		}
		return false, fmt.Errorf("pending workers %+v; AM log:\n%s", pw, logs.String())
	})
	var p api.PendingWorker
	for _, x := range pw {
		if x.Reason == "Unschedulable" {
			p = x
		}
	}
	if !strings.HasPrefix(p.ID, "toobig-taskmanager-1-") || p.State != "Requested" || !strings.Contains(p.Message, "Insufficient cpu") || p.Requested <= 0 {
		t.Fatalf("pending worker %+v, want a toobig pod Requested with the scheduler's 'Insufficient cpu'", p)
	}
	if _, err := cs.CoreV1().Pods(ns).Get(ctx, p.ID, metav1.GetOptions{}); err != nil {
		t.Fatalf("the pending worker's pod: %v", err)
	}
	if !strings.Contains(logs.String(), "cannot be scheduled") || !strings.Contains(logs.String(), "Insufficient cpu") {
		t.Fatalf("the AM's log lacks the scheduler's reason:\n%s", logs.String())
	}
}
