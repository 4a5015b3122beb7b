package am_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/tidestream/tide/am"
	"github.com/tidestream/tide/api"
	"github.com/tidestream/tide/conf"
	"github.com/tidestream/tide/core"
	"github.com/tidestream/tide/examples"
	"github.com/tidestream/tide/internal/testkit"
	"github.com/tidestream/tide/storage"
	"github.com/tidestream/tide/stream"
	"github.com/tidestream/tide/tm/worker"
)

// An AM that dies (its connections cut, its storage frozen: it persists nothing more,
// as after SIGKILL) is replaced by a new AM on the same checkpoint directory. The
// TaskManagers keep their subtasks running meanwhile and report them; the new AM adopts
// them (the running attempt restored nothing, no exception says adoption was abandoned)
// and the job's output is exact. Done twice.
func TestAMFailoverAdoptsRunningTasks(t *testing.T) {
	dir, out := t.TempDir(), t.TempDir()
	args := []string{"--records", "60000", "--keys", "7", "--rate", "6000", "--output", out}
	o := clusterOptions{job: examples.CheckableCountName, args: args, ckptDir: dir, interval: 200 * time.Millisecond,
		dynamic: []string{"jobmanager.failover.task-adoption.timeout=30 s"}}
	px := newProxy(t)
	ams := []*failoverAM{startFailoverAM(t, o, px)}
	ctx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	t.Cleanup(func() { cancel(); wg.Wait() })
	for _, id := range []string{"tm-a", "tm-b"} {
		wg.Add(1)
		go func() {
			defer wg.Done()
			err := worker.Run(ctx, worker.Config{AMAddress: px.addr(), ID: id, NodeID: "node-" + id, Slots: 1,
				ConnectTimeout: time.Minute, MaxBackoff: 200 * time.Millisecond, Logger: testkit.Logger().With("process", id)})
			if err != nil {
				t.Logf("TaskManager %s: %v", id, err)
			}
		}()
	}
	for kill := 1; kill <= 2; kill++ {
		cur := ams[len(ams)-1]
		d := testkit.WaitRunningAt(t, cur.getJSON, jobID, 2)
		testkit.WaitFor(t, "a completed checkpoint", func() (bool, error) {
			var cs api.CheckpointingStatistics
			err := cur.getJSON("/jobs/"+jobID+"/checkpoints", &cs)
			return err == nil && cs.Counts.Completed > 0, err
		})
		waitDeploymentDurable(t, dir, d.Attempt)
		cur.die(px)
		next := startFailoverAM(t, o, px)
		ams = append(ams, next)
		after := testkit.WaitRunningAt(t, next.getJSON, jobID, 2)
		if after.Attempt != d.Attempt || after.RestoreFrom != 0 {
			t.Fatalf("after AM kill %d: attempt %d restored from %d; want attempt %d adopted (no restore); lastFailover %+v",
				kill, after.Attempt, after.RestoreFrom, d.Attempt, after.LastFailover)
		}
		var ex api.JobExceptions
		if err := next.getJSON("/jobs/"+jobID+"/exceptions", &ex); err != nil {
			t.Fatal(err)
		}
		for _, e := range ex.ExceptionHistory.Entries {
			if strings.Contains(e.ExceptionName+e.Stacktrace, "adoption abandoned") {
				t.Fatalf("after AM kill %d: %s", kill, e.Stacktrace)
			}
		}
	}
	last := ams[len(ams)-1]
	select {
	case res := <-last.result:
		if res.Status != core.StatusFinished {
			t.Fatalf("job ended %s (%s)", res.Status, res.Cause)
		}
	case <-time.After(3 * time.Minute):
		t.Fatal("job did not finish")
	}
	testkit.CheckExactOutput(t, out, args)
}

// waitDeploymentDurable waits until the AM state in the checkpoint directory dir records
// the running attempt's deployment. The AM writes its state off the event loop: one killed
// before the record is durable leaves the next AM nothing to adopt, and it restores from the
// latest checkpoint instead (correct, but not what a test of adoption wants to see).
func waitDeploymentDurable(t *testing.T, dir string, attempt int64) {
	t.Helper()
	testkit.WaitFor(t, fmt.Sprintf("the deployment of attempt %d recorded in the AM state", attempt), func() (bool, error) {
		got, err := am.PersistedDeploymentAttempt(dir, jobID)
		return got == attempt, fmt.Errorf("AM state records attempt %d (%v)", got, err)
	})
}

// failoverAM is one AM process of the test, on the shared checkpoint directory.
type failoverAM struct {
	am     *am.AM
	st     *freezableStorage
	cancel context.CancelFunc
	result chan am.Result
	done   chan struct{}
}

func (f *failoverAM) getJSON(path string, v any) error {
	return testkit.GetJSON(context.Background(), "http://"+f.am.RESTAddr()+path, v)
}

// die is a crash: nothing more reaches the storage or the TaskManagers.
func (f *failoverAM) die(pxs ...*proxy) {
	f.st.freeze()
	// Every link of every proxy falls silent before any closes: an AM that sees one
	// TaskManager go must not tell another to cancel its subtasks.
	for _, px := range pxs {
		px.silence()
	}
	for _, px := range pxs {
		px.cut()
	}
	f.cancel()
	<-f.done
}

func startFailoverAM(t *testing.T, o clusterOptions, pxs ...*proxy) *failoverAM {
	t.Helper()
	build, _ := stream.Lookup(o.job)
	job, err := build(o.args)
	if err != nil {
		t.Fatal(err)
	}
	cfg, _, err := conf.Load("", o.settings())
	if err != nil {
		t.Fatal(err)
	}
	raw, err := storage.Open(context.Background(), "file://"+o.ckptDir, storage.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { raw.Close() })
	st := &freezableStorage{Storage: raw}
	rpcLn, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	restLn, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	a, err := am.New(am.Config{
		JobID: jobID, JobName: o.job, JobArgs: o.args, Job: job,
		Options: am.SchedulerOptions(cfg), Conf: cfg.Map(), Storage: st,
		CheckpointInterval: o.interval, CheckpointTimeout: time.Minute, NumRetained: 2,
		HeartbeatInterval: time.Second, Logger: testkit.Logger().With("process", "am"),
		RPCListener: rpcLn, RESTListener: restLn,
	})
	if err != nil {
		t.Fatal(err)
	}
	for _, px := range pxs {
		px.target(a.RPCAddr())
	}
	ctx, cancel := context.WithCancel(context.Background())
	f := &failoverAM{am: a, st: st, cancel: cancel, result: make(chan am.Result, 1), done: make(chan struct{})}
	go func() {
		defer close(f.done)
		res, err := a.Run(ctx)
		if err != nil {
			t.Errorf("AM: %v", err)
		}
		f.result <- res
	}()
	t.Cleanup(func() { cancel(); <-f.done })
	return f
}

// freezableStorage fails every write once frozen.
type freezableStorage struct {
	storage.Storage
	mu     sync.Mutex
	frozen bool
}

var errFrozen = errors.New("storage frozen: the AM is dead")

func (s *freezableStorage) freeze() { s.mu.Lock(); s.frozen = true; s.mu.Unlock() }

func (s *freezableStorage) isFrozen() bool { s.mu.Lock(); defer s.mu.Unlock(); return s.frozen }

func (s *freezableStorage) Create(ctx context.Context, name string) (storage.Writer, error) {
	if s.isFrozen() {
		return nil, errFrozen
	}
	w, err := s.Storage.Create(ctx, name)
	if err != nil {
		return nil, err
	}
	return &freezableWriter{Writer: w, s: s}, nil
}

func (s *freezableStorage) Delete(ctx context.Context, name string) error {
	if s.isFrozen() {
		return errFrozen
	}
	return s.Storage.Delete(ctx, name)
}

func (s *freezableStorage) Rename(ctx context.Context, from, to string) error {
	if s.isFrozen() {
		return errFrozen
	}
	return s.Storage.Rename(ctx, from, to)
}

type freezableWriter struct {
	storage.Writer
	s *freezableStorage
}

func (w *freezableWriter) Commit(ctx context.Context) error {
	if w.s.isFrozen() {
		_ = w.Writer.Abort(ctx)
		return errFrozen
	}
	return w.Writer.Commit(ctx)
}

// proxy forwards TaskManager connections to the current AM; cut breaks every connection
// at once, as a dead AM process does.
type proxy struct {
	ln    net.Listener
	mu    sync.Mutex
	to    string
	links []*proxyLink
	held  bool // connections are closed as they come (see hold)
}

// proxyLink is one TaskManager connection through the proxy. Once dead, nothing the AM
// sends reaches the TaskManager any more: a cut silences every link before it closes
// any, so an AM that sees one TaskManager go cannot still tell the others anything (a
// killed process does not react to its connections closing).
type proxyLink struct {
	down, up net.Conn // the TaskManager's side, the AM's side
	dead     atomic.Bool
}

// forward copies what the AM sends to the TaskManager until the link dies.
func (l *proxyLink) forward() {
	buf := make([]byte, 32<<10)
	for {
		n, err := l.up.Read(buf)
		if l.dead.Load() {
			return
		}
		if n > 0 {
			if _, werr := l.down.Write(buf[:n]); werr != nil {
				return
			}
		}
		if err != nil {
			return
		}
	}
}

// hold closes every connection now and every new one until release: the TaskManagers
// behind it cannot reach the AM.
func (p *proxy) hold() {
	p.mu.Lock()
	p.held = true
	p.mu.Unlock()
	p.closeAll()
}

func (p *proxy) release() { p.mu.Lock(); p.held = false; p.mu.Unlock() }

func newProxy(t *testing.T) *proxy {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	p := &proxy{ln: ln}
	t.Cleanup(func() { ln.Close(); p.cut() })
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			go p.serve(c)
		}
	}()
	return p
}

func (p *proxy) addr() string { return p.ln.Addr().String() }

func (p *proxy) target(addr string) { p.mu.Lock(); p.to = addr; p.mu.Unlock() }

func (p *proxy) serve(c net.Conn) {
	p.mu.Lock()
	to, held := p.to, p.held
	p.mu.Unlock()
	if held {
		c.Close()
		return
	}
	up, err := net.Dial("tcp", to)
	if err != nil {
		c.Close()
		return
	}
	p.mu.Lock()
	if p.to != to || p.held {
		// Cut or held while dialing: the connection must not reach the AM it was
		// dialed for (a dying AM would tell the TaskManager to go).
		p.mu.Unlock()
		up.Close()
		c.Close()
		return
	}
	l := &proxyLink{down: c, up: up}
	p.links = append(p.links, l)
	p.mu.Unlock()
	go func() { _, _ = io.Copy(up, c); up.Close() }()
	l.forward()
	c.Close()
}

func (p *proxy) cut() {
	p.silence()
	p.closeAll()
}

// silence drops what the AM sends on every link from now on and refuses new connections
// (nothing listens on port 1 until the next AM), closing nothing yet.
func (p *proxy) silence() {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.to = "127.0.0.1:1"
	for _, l := range p.links {
		l.dead.Store(true)
	}
}

// closeAll breaks every connection through the proxy: all fall silent first, then close.
func (p *proxy) closeAll() {
	p.mu.Lock()
	defer p.mu.Unlock()
	for _, l := range p.links {
		l.dead.Store(true)
	}
	for _, l := range p.links {
		l.down.Close()
		l.up.Close()
	}
	p.links = nil
}
