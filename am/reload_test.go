package am

import (
	"context"
	"log/slog"
	"net"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/tidestream/tide/conf"
	"github.com/tidestream/tide/core"
	"github.com/tidestream/tide/examples"
	"github.com/tidestream/tide/storage"
	"github.com/tidestream/tide/stream"
)

// reloadAM is an AM (no TaskManagers) watching a configuration directory of its own.
type reloadAM struct {
	a    *AM
	dir  string
	done chan struct{}
}

func startReloadAM(t *testing.T, file string) *reloadAM {
	t.Helper()
	dir := t.TempDir()
	writeConf(t, dir, file)
	dyn := []string{"state.checkpoints.dir=file://" + t.TempDir()}
	cfg, _, err := conf.Load(dir, dyn)
	if err != nil {
		t.Fatal(err)
	}
	build, ok := stream.Lookup(examples.TopSpeedWindowingName)
	if !ok {
		t.Fatal("TopSpeedWindowing not registered")
	}
	job, err := build(nil)
	if err != nil {
		t.Fatal(err)
	}
	st, err := storage.Open(context.Background(), conf.CheckpointsDir.Get(cfg), storage.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	interval, _ := conf.CheckpointingInterval.Lookup(cfg)
	log := slog.New(slog.DiscardHandler)
	if os.Getenv("TIDE_TEST_LOG") != "" {
		log = slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelDebug}))
	}
	a, err := New(Config{
		JobID: "0123456789abcdef0123456789abcdef", JobName: examples.TopSpeedWindowingName, Job: job,
		Options: SchedulerOptions(cfg), Conf: cfg.Map(), Storage: st, CheckpointInterval: interval,
		CheckpointTimeout: conf.CheckpointingTimeout.Get(cfg), NumRetained: 1,
		Logger: log, RPCListener: ln,
		Watch: ConfigWatch{Dir: dir, Dynamic: dyn, Initial: cfg, Debounce: 20 * time.Millisecond},
	})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	r := &reloadAM{a: a, dir: dir, done: make(chan struct{})}
	go func() {
		defer close(r.done)
		if _, err := a.Run(ctx); err != nil {
			t.Errorf("AM: %v", err)
		}
	}()
	t.Cleanup(func() { cancel(); <-r.done })
	select {
	case <-a.reload.watcher.Ready():
	case <-time.After(30 * time.Second):
		t.Fatal("configuration watcher not ready")
	}
	return r
}

// writeConf replaces flink-conf.yaml the way editors do: a new file renamed over the old one.
func writeConf(t *testing.T, dir, content string) {
	t.Helper()
	tmp := filepath.Join(dir, ".flink-conf.yaml.swp")
	if err := os.WriteFile(tmp, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(tmp, filepath.Join(dir, conf.FileName)); err != nil {
		t.Fatal(err)
	}
}

// onLoop reads the loop-owned state through the loop.
func (r *reloadAM) onLoop(t *testing.T, f func()) {
	t.Helper()
	done := make(chan struct{})
	if !r.a.post(func() { f(); close(done) }) {
		t.Fatal("AM loop ended")
	}
	<-done
}

func (r *reloadAM) options(t *testing.T) (o core.Options, interval time.Duration) {
	r.onLoop(t, func() { o, interval = r.a.sched.Options(), r.a.ckpt.interval })
	return o, interval
}

// eventually polls cond; the deadline only guards against hangs.
func eventually(t *testing.T, what string, cond func() bool) {
	t.Helper()
	for deadline := time.Now().Add(30 * time.Second); time.Now().Before(deadline); time.Sleep(10 * time.Millisecond) {
		if cond() {
			return
		}
	}
	t.Fatalf("timed out waiting for %s", what)
}

const baseConf = `jobmanager.adaptive-scheduler.min-parallelism-increase: 1
execution.checkpointing.interval: 10 s
execution-mode: reactive
`

func TestReloadAppliesLiveKeys(t *testing.T) {
	r := startReloadAM(t, baseConf)
	if o, iv := r.options(t); o.MinParallelismIncrease != 1 || iv != 10*time.Second {
		t.Fatalf("start: min-parallelism-increase %d, interval %s", o.MinParallelismIncrease, iv)
	}
	writeConf(t, r.dir, `jobmanager.adaptive-scheduler.min-parallelism-increase: 3
jobmanager.adaptive-scheduler.executing.cooldown-after-rescaling: 7 s
execution.checkpointing.interval: 2 s
execution.checkpointing.timeout: 90 s
restart-strategy.type: fixed-delay
restart-strategy.fixed-delay.attempts: 9
blocklist.default-timeout: 5 min
execution-mode: reactive
`)
	eventually(t, "the reload to reach the core", func() bool {
		o, _ := r.options(t)
		return o.MinParallelismIncrease == 3
	})
	o, iv := r.options(t)
	if o.Cooldown != 7*time.Second || o.Restart.Attempts != 9 || o.BlocklistDefaultTimeout != 5*time.Minute {
		t.Errorf("options after reload: cooldown %s, restart attempts %d, blocklist timeout %s", o.Cooldown, o.Restart.Attempts, o.BlocklistDefaultTimeout)
	}
	if iv != 2*time.Second {
		t.Errorf("checkpoint interval after reload = %s, want 2 s", iv)
	}
	var timeout time.Duration
	r.onLoop(t, func() { timeout = r.a.ckpt.co.Config().Timeout })
	if timeout != 90*time.Second {
		t.Errorf("checkpoint timeout after reload = %s, want 90 s", timeout)
	}
	if got := r.a.ConfigInForce()["jobmanager.adaptive-scheduler.min-parallelism-increase"]; got != "3" {
		t.Errorf("configuration in force shows min-parallelism-increase %q, want 3", got)
	}
	if s := r.a.ReloadStats(); s.Reloads != 1 || s.Failures != 0 {
		t.Errorf("stats %+v, want 1 reload, 0 failures", s)
	}
}

func TestReloadKeepsRestartOnlyKeys(t *testing.T) {
	r := startReloadAM(t, baseConf)
	// execution-mode (removed here: back to the default scheduler) and the RPC port need a
	// restart; min-parallelism-increase is live.
	writeConf(t, r.dir, `jobmanager.adaptive-scheduler.min-parallelism-increase: 2
execution.checkpointing.interval: 10 s
jobmanager.rpc.port: 7000
`)
	eventually(t, "the reload", func() bool {
		o, _ := r.options(t)
		return o.MinParallelismIncrease == 2
	})
	if o, _ := r.options(t); !o.Reactive {
		t.Error("execution-mode changed live; it needs a restart")
	}
	in := r.a.ConfigInForce()
	if in["execution-mode"] != "reactive" || in["jobmanager.rpc.port"] != "6123" {
		t.Errorf("configuration in force: execution-mode %q, rpc port %q; want the running values reactive, 6123",
			in["execution-mode"], in["jobmanager.rpc.port"])
	}
	// A later live change keeps the restart-only keys at their running values.
	writeConf(t, r.dir, `jobmanager.adaptive-scheduler.min-parallelism-increase: 4
execution.checkpointing.interval: 10 s
jobmanager.rpc.port: 7000
`)
	eventually(t, "the second reload", func() bool {
		o, _ := r.options(t)
		return o.MinParallelismIncrease == 4
	})
	if in := r.a.ConfigInForce(); in["execution-mode"] != "reactive" {
		t.Errorf("after a second reload the configuration in force shows execution-mode %q, want reactive", in["execution-mode"])
	}
}

func TestReloadKeepsConfigOnBadFile(t *testing.T) {
	r := startReloadAM(t, baseConf)
	for i, bad := range []string{
		"jobmanager.adaptive-scheduler.min-parallelism-increase: [1, 2\n", // YAML syntax
		"jobmanager.adaptive-scheduler.min-parallelism-increase: 0\n",     // invalid value
		"execution.checkpointing.interval: soon\n",                        // not a duration
	} {
		writeConf(t, r.dir, bad)
		eventually(t, "the failure to be counted", func() bool { return r.a.ReloadStats().Failures == uint64(i+1) })
	}
	o, iv := r.options(t)
	if o.MinParallelismIncrease != 1 || iv != 10*time.Second {
		t.Errorf("after bad files: min-parallelism-increase %d, interval %s; want the old 1, 10 s", o.MinParallelismIncrease, iv)
	}
	if s := r.a.ReloadStats(); s.Reloads != 0 {
		t.Errorf("stats %+v: a bad file counted as a reload", s)
	}
	// The next good file is applied.
	writeConf(t, r.dir, "jobmanager.adaptive-scheduler.min-parallelism-increase: 5\nexecution.checkpointing.interval: 10 s\nexecution-mode: reactive\n")
	eventually(t, "the good file", func() bool {
		o, _ := r.options(t)
		return o.MinParallelismIncrease == 5
	})
}

func TestReloadTurnsCheckpointingOff(t *testing.T) {
	r := startReloadAM(t, baseConf)
	writeConf(t, r.dir, "jobmanager.adaptive-scheduler.min-parallelism-increase: 1\nexecution-mode: reactive\n")
	eventually(t, "checkpointing off", func() bool {
		_, iv := r.options(t)
		return iv == 0
	})
}

func TestReloadOffWithoutDir(t *testing.T) {
	a := &AM{cfg: Config{Conf: map[string]string{"k": "v"}}}
	if r, err := newReloader(a, ConfigWatch{}); r != nil || err != nil {
		t.Fatalf("newReloader without a directory = %v, %v; want off", r, err)
	}
	if got := a.ConfigInForce()["k"]; got != "v" {
		t.Fatalf("ConfigInForce without reload = %q, want the start-up map", got)
	}
	if (a.ReloadStats() != ReloadStats{}) {
		t.Fatal("stats without reload are not zero")
	}
	if _, err := newReloader(&AM{}, ConfigWatch{Dir: t.TempDir()}); err == nil {
		t.Fatal("a directory without an initial configuration was accepted")
	}
}
