package e2e

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/tidestream/tide/api"
	"github.com/tidestream/tide/examples"
	"github.com/tidestream/tide/internal/testkit"
	"github.com/tidestream/tide/standalone"
)

// Warm-up before planned moves and standby copies (issue 14, KIP-441), with real
// processes: the checkable keyed job (5000 keys of state) must stay exactly once across
// every move.

// warmupArgs is the checkable job: enough keys that its state is spread over every key
// group, slow enough that moves happen while it runs.
func warmupArgs(out string) []string {
	return []string{"--records", "600000", "--keys", "5000", "--rate", "20000", "--output", out}
}

// warmupSettings: reactive mode with warm-ups (and local recovery, which restores from the
// copies) on top of the e2e defaults.
func warmupSettings(t *testing.T, extra ...string) []string {
	return append(reactive(t.TempDir(), "200 ms"), append([]string{
		"state.warmup.timeout=2 min", "state.backend.local-recovery=true"}, extra...)...)
}

// lastRescale waits for a completed rescale with the trigger whose switch downtime is known.
func lastRescale(t *testing.T, c *standalone.LocalCluster, id, trigger string) api.Rescale {
	t.Helper()
	var r api.Rescale
	testkit.WaitFor(t, "a completed "+trigger+" rescale with its switch downtime", func() (bool, error) {
		var rs api.Rescales
		if err := rest(c, "/jobs/"+id+"/rescales", &rs); err != nil {
			return false, err
		}
		for i := len(rs.Rescales) - 1; i >= 0; i-- {
			if x := rs.Rescales[i]; x.Trigger == trigger && x.Outcome == "COMPLETED" {
				r = x
				return x.SwitchDowntime >= 0, nil
			}
		}
		return false, nil
	})
	return r
}

// rescalesRow returns the columns of rescale id in `tide rescales`.
func rescalesRow(t *testing.T, c *standalone.LocalCluster, job string, id int64) []string {
	t.Helper()
	out, err := tideCmd(t, tideBin, time.Minute, "rescales", job, "-m", c.RESTAddress())
	if err != nil {
		t.Fatalf("tide rescales: %v\n%s", err, out)
	}
	lines := strings.Split(strings.TrimSpace(out), "\n")
	cols := regexp.MustCompile(`\s{2,}`)
	if want := []string{"ID", "TRIGGER", "OUTCOME", "STARTED", "TOOK", "ATTEMPT", "MOVED", "BYTES", "WARMUP", "DOWNTIME", "PARALLELISM"}; strings.Join(cols.Split(lines[0], -1), "|") != strings.Join(want, "|") {
		t.Fatalf("tide rescales header %q, want the columns %v", lines[0], want)
	}
	for _, l := range lines[1:] {
		if f := cols.Split(strings.TrimSpace(l), -1); f[0] == fmt.Sprint(id) {
			return f
		}
	}
	t.Fatalf("tide rescales has no row %d:\n%s", id, out)
	return nil
}

// checkWarmedUp checks that a rescale warmed up every copy it planned, and that `tide
// rescales` shows it so.
func checkWarmedUp(t *testing.T, c *standalone.LocalCluster, job string, r api.Rescale, parallelism string) {
	t.Helper()
	if r.Warmup == nil || r.Warmup.Planned == 0 || r.Warmup.Ready != r.Warmup.Planned || r.Warmup.TimedOut {
		t.Fatalf("rescale %+v: want a warm-up whose copies all caught up", r)
	}
	if r.BytesMoved <= 0 || r.WarmupDuration <= 0 || r.KeyGroupsMoved <= 0 {
		t.Fatalf("rescale %+v: want bytes moved, a warm-up time and moved key groups", r)
	}
	f := rescalesRow(t, c, job, r.ID)
	want := fmt.Sprintf("%s|COMPLETED|%d|%d|(%d/%d ready)|%s", r.Trigger, r.Attempt, r.KeyGroupsMoved, r.Warmup.Ready, r.Warmup.Planned, parallelism)
	got := strings.Join([]string{f[1], f[2], f[5], f[6], f[8][strings.Index(f[8], "("):], f[10]}, "|")
	if got != want {
		t.Errorf("tide rescales row %q:\n got %s\nwant %s", strings.Join(f, "  "), got, want)
	}
	t.Logf("rescale %d: %d key groups moved, %d bytes moved (warm-up and restore downloads), warm-up %d ms, switch downtime %d ms",
		r.ID, r.KeyGroupsMoved, r.BytesMoved, r.WarmupDuration, r.SwitchDowntime)
}

// A new TaskManager warms up its ranges while the job runs at 2; then the job switches to 3.
func TestWarmupScaleUp(t *testing.T) {
	out := t.TempDir()
	args := warmupArgs(out)
	c := startCluster(t, examples.CheckableCountName, args, 2, warmupSettings(t))
	id := jobID(t, c)
	d := waitRunningAt(t, c, id, 2)
	waitCheckpointIn(t, c, id, d.Attempt)
	tm, err := c.AddTaskManager(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	waitRunningAt(t, c, id, 3)
	r := lastRescale(t, c, id, "NEW_RESOURCE_AVAILABLE")
	checkWarmedUp(t, c, id, r, "numbers 2→3, count_and_sum 2→3")
	checkRestoredLocally(t, c, tm, "count_and_sum")
	waitExact(t, c, 3*time.Minute, out, args)
}

// checkRestoredLocally checks that the TaskManager's subtask of vertex restored its key
// groups from local files (the warm-up copies), downloading none of their state.
func checkRestoredLocally(t *testing.T, c *standalone.LocalCluster, tm, vertex string) {
	t.Helper()
	n := strings.TrimPrefix(tm, "tm-")
	b, err := os.ReadFile(filepath.Join(c.LogDir(), "taskmanager-"+n+".log"))
	if err != nil {
		t.Fatal(err)
	}
	re := regexp.MustCompile(`msg="restoring state".* vertex=` + vertex + ` .*local_files=(\d+) local_bytes=(\d+) downloaded_files=\d+ downloaded_bytes=(\d+)`)
	m := re.FindStringSubmatch(string(b))
	if m == nil {
		t.Fatalf("%s restored no %s subtask (no \"restoring state\" line in its log)", tm, vertex)
	}
	if m[1] == "0" {
		t.Errorf("%s restored %s from no local file: %s", tm, vertex, m[0])
	}
	t.Logf("%s restored %s with %s local file(s), %s bytes local, %s bytes downloaded", tm, vertex, m[1], m[2], m[3])
}

// Evacuating a blocked node: its TaskManager runs on until the new owners of its ranges
// are warm (standalone keeps the process, unused while its node is blocked).
func TestWarmupEvacuation(t *testing.T) {
	out := t.TempDir()
	args := warmupArgs(out)
	c := startCluster(t, examples.CheckableCountName, args, 3, warmupSettings(t))
	id := jobID(t, c)
	d := waitRunningAt(t, c, id, 3)
	waitCheckpointIn(t, c, id, d.Attempt)
	if out, err := tideCmd(t, tideBin, time.Minute, "blocklist", "add", "local-3", "--evacuate", "--timeout", "30m",
		"--cause", "disk failing", "-m", c.RESTAddress()); err != nil {
		t.Fatalf("tide blocklist add --evacuate: %v\n%s", err, out)
	}
	waitRunningAt(t, c, id, 2)
	r := lastRescale(t, c, id, "BLOCKLIST_EVACUATION")
	checkWarmedUp(t, c, id, r, "numbers 3→2, count_and_sum 3→2")
	waitExact(t, c, 3*time.Minute, out, args)
}

// `tide rescale` (FLIP-291 requirements, default scheduler mode) warms up too.
func TestWarmupTideRescale(t *testing.T) {
	out := t.TempDir()
	args := warmupArgs(out)
	dyn := []string{
		"jobmanager.adaptive-scheduler.executing.cooldown-after-rescaling=0 s",
		"jobmanager.adaptive-scheduler.executing.resource-stabilization-timeout=0 s",
		"jobmanager.adaptive-scheduler.submission.resource-stabilization-timeout=0 s",
		"heartbeat.timeout=30 min",
		"restart-strategy.type=fixed-delay", "restart-strategy.fixed-delay.attempts=1000", "restart-strategy.fixed-delay.delay=10 ms",
		"state.checkpoints.dir=file://" + t.TempDir(), "execution.checkpointing.interval=200 ms",
		"taskmanager.numberOfTaskSlots=1", "state.warmup.timeout=2 min", "state.backend.local-recovery=true",
	}
	c := startCluster(t, examples.CheckableCountName, args, 2, dyn)
	id := jobID(t, c)
	d := waitRunningAt(t, c, id, 1)
	waitCheckpointIn(t, c, id, d.Attempt)
	for _, v := range d.Vertices {
		if out, err := tideCmd(t, tideBin, 2*time.Minute, "rescale", id, "--vertex", v.ID, "--parallelism", "2..2", "-m", c.RESTAddress()); err != nil {
			t.Fatalf("tide rescale %s 2..2: %v\n%s", v.ID, err, out)
		}
	}
	waitRunningAt(t, c, id, 2)
	r := lastRescale(t, c, id, "UPDATE_REQUIREMENT")
	checkWarmedUp(t, c, id, r, "numbers 1→2, count_and_sum 1→2")
	waitExact(t, c, 3*time.Minute, out, args)
}

// num.standby.replicas: 1 keeps a copy of every range on another TaskManager; after a
// SIGKILL the job restores (its lost ranges preferably where their copies are) and stays
// exactly once. The standby gauges are on /metrics.
func TestStandbySIGKILL(t *testing.T) {
	out := t.TempDir()
	args := warmupArgs(out)
	c := startCluster(t, examples.CheckableCountName, args, 3, warmupSettings(t, "num.standby.replicas=1"))
	id := jobID(t, c)
	d := waitRunningAt(t, c, id, 3)
	waitCheckpointIn(t, c, id, d.Attempt)
	testkit.WaitFor(t, "standby copies caught up on /metrics", func() (bool, error) {
		m, err := metricsText(c)
		if err != nil {
			return false, err
		}
		// In the same sample as a completed checkpoint: before the first one the lag is 0
		// with nothing copied.
		return metricValue(m, "lastCheckpointSize") > 0 && metricValue(m, "standbyCopies") >= 3 && metricValue(m, "standbyLag") == 0, nil
	})
	if err := c.Signal("tm-1", syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	waitRunningAt(t, c, id, 2)
	r := lastRescale(t, c, id, "RESOURCE_LOST")
	t.Logf("TaskManager loss with a standby: switch downtime %d ms, %d key groups moved", r.SwitchDowntime, r.KeyGroupsMoved)
	waitExact(t, c, 3*time.Minute, out, args)
}

// longArgs is the checkable job running long enough (about 30 s) for a held-back move.
func longArgs(out string) []string {
	return []string{"--records", "1200000", "--keys", "5000", "--rate", "20000", "--output", out}
}

// holdRescale starts a third TaskManager while the cooldown after the last rescale holds
// any move back, and freezes it (SIGSTOP) once registered: its warm-up cannot progress.
func holdRescale(t *testing.T, c *standalone.LocalCluster, id string) string {
	t.Helper()
	tm, err := c.AddTaskManager(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	testkit.WaitFor(t, tm+" registered", func() (bool, error) {
		var tms api.TaskManagers
		if err := rest(c, "/taskmanagers", &tms); err != nil {
			return false, err
		}
		return len(tms.TaskManagers) == 3, nil
	})
	if err := c.Signal(tm, syscall.SIGSTOP); err != nil {
		t.Fatal(err)
	}
	testkit.WaitFor(t, "the scale-up waiting for its warm-up", func() (bool, error) {
		var j api.JobDetails
		if err := rest(c, "/jobs/"+id, &j); err != nil {
			return false, err
		}
		return j.PendingRescale != nil && j.PendingRescale.Reason == "WARMING_UP", nil
	})
	return tm
}

// A warm-up that does not catch up in state.warmup.timeout: the move proceeds without it.
func TestWarmupTimesOut(t *testing.T) {
	out := t.TempDir()
	args := longArgs(out)
	dyn := append(warmupSettings(t), "state.warmup.timeout=3 s", "jobmanager.adaptive-scheduler.executing.cooldown-after-rescaling=6 s")
	c := startCluster(t, examples.CheckableCountName, args, 2, dyn)
	id := jobID(t, c)
	d := waitRunningAt(t, c, id, 2)
	waitCheckpointIn(t, c, id, d.Attempt)
	tm := holdRescale(t, c, id)
	var r api.Rescale
	testkit.WaitFor(t, "the scale-up after the warm-up timed out", func() (bool, error) {
		var rs api.Rescales
		if err := rest(c, "/jobs/"+id+"/rescales", &rs); err != nil {
			return false, err
		}
		for _, x := range rs.Rescales {
			if x.Trigger == "NEW_RESOURCE_AVAILABLE" && x.Outcome == "COMPLETED" {
				r = x
				return true, nil
			}
		}
		return false, nil
	})
	if err := c.Signal(tm, syscall.SIGCONT); err != nil {
		t.Fatal(err)
	}
	if r.Warmup == nil || !r.Warmup.TimedOut || r.Warmup.Ready != 0 {
		t.Fatalf("rescale %+v: want a warm-up that timed out with no copy ready", r)
	}
	waitRunningAt(t, c, id, 3)
	f := rescalesRow(t, c, id, r.ID)
	if !strings.HasSuffix(f[8], fmt.Sprintf("(0/%d ready) timed out", r.Warmup.Planned)) || f[1] != "NEW_RESOURCE_AVAILABLE" || f[2] != "COMPLETED" {
		t.Errorf("tide rescales row %q: want NEW_RESOURCE_AVAILABLE COMPLETED with \"(0/%d ready) timed out\"", strings.Join(f, "  "), r.Warmup.Planned)
	}
	waitExact(t, c, 3*time.Minute, out, args)
}

// The warm-up TaskManager killed in the middle: the move it was for is dropped, the job
// runs on untouched (no restart) and stays exactly once.
func TestWarmupTaskManagerKilled(t *testing.T) {
	out := t.TempDir()
	args := longArgs(out)
	dyn := append(warmupSettings(t), "jobmanager.adaptive-scheduler.executing.cooldown-after-rescaling=6 s")
	c := startCluster(t, examples.CheckableCountName, args, 2, dyn)
	id := jobID(t, c)
	d := waitRunningAt(t, c, id, 2)
	waitCheckpointIn(t, c, id, d.Attempt)
	tm := holdRescale(t, c, id)
	if err := c.Signal(tm, syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	testkit.WaitFor(t, "the warm-up dropped with its TaskManager", func() (bool, error) {
		var j api.JobDetails
		if err := rest(c, "/jobs/"+id, &j); err != nil {
			return false, err
		}
		return j.PendingRescale == nil, nil
	})
	now := waitRunningAt(t, c, id, 2)
	if now.Attempt != d.Attempt {
		t.Errorf("attempt %d after the warm-up TaskManager was killed, want %d (no restart)", now.Attempt, d.Attempt)
	}
	waitExact(t, c, 3*time.Minute, out, args)
}

// metricsText reads the AM's /metrics (Prometheus text format).
func metricsText(c *standalone.LocalCluster) (string, error) {
	code, _, body, err := testkit.Send(context.Background(), "GET", "http://"+c.RESTAddress()+"/metrics", "")
	if err == nil && code != 200 {
		err = fmt.Errorf("GET /metrics: status %d", code)
	}
	return string(body), err
}

// metricValue returns the value of the job metric tide_jobmanager_job_<name> (-1 when absent).
func metricValue(text, name string) float64 {
	re := regexp.MustCompile(`(?m)^tide_jobmanager_job_` + name + `\{[^}]*\} ([0-9.e+-]+)$`)
	m := re.FindStringSubmatch(text)
	if m == nil {
		return -1
	}
	var v float64
	fmt.Sscan(m[1], &v)
	return v
}

// CheckableCount --ballast (the benchmark's state filler, on pebble) stays exactly once
// across a warmed-up scale-up, the copies carry the filler (bytes moved above the
// ballast's share of the new TaskManager), and --progress shows the record gap of the
// switch that BenchmarkWarmupDowntime reports.
func TestWarmupBallastProgress(t *testing.T) {
	out := t.TempDir()
	progress := filepath.Join(t.TempDir(), "progress")
	const keys, ballast = 1000, 4096
	args := []string{"--records", "600000", "--keys", fmt.Sprint(keys), "--rate", "20000", "--output", out,
		"--ballast", fmt.Sprint(ballast), "--progress", progress}
	c := startCluster(t, examples.CheckableCountName, args, 2, warmupSettings(t, "state.backend.type=pebble",
		"execution.checkpointing.incremental=true", "max.warmup.replicas=8"))
	id := jobID(t, c)
	d := waitRunningAt(t, c, id, 2)
	testkit.WaitFor(t, "a checkpoint with the whole ballast", func() (bool, error) {
		var s api.CheckpointingStatistics
		if err := rest(c, "/jobs/"+id+"/checkpoints", &s); err != nil {
			return false, err
		}
		l := s.Latest.Completed
		return l != nil && l.Attempt >= d.Attempt && l.StateSize >= keys*ballast, nil
	})
	if _, err := c.AddTaskManager(t.Context()); err != nil {
		t.Fatal(err)
	}
	next := waitRunningAt(t, c, id, 3)
	r := lastRescale(t, c, id, "NEW_RESOURCE_AVAILABLE")
	if r.Warmup == nil || r.Warmup.Ready != r.Warmup.Planned || r.BytesMoved < keys*ballast/4 {
		t.Errorf("rescale %+v: want every copy caught up and at least a quarter of the %d bytes of ballast moved", r, keys*ballast)
	}
	log := &progressLog{path: progress}
	var gap time.Duration
	testkit.WaitFor(t, "every subtask of the new attempt in the progress file", func() (bool, error) {
		g, ok, err := log.gap(d.Attempt, next.Attempt, 3)
		gap = g
		return ok, err
	})
	if gap <= 0 {
		t.Errorf("record gap of the switch %v: the new attempt cannot process before the old one stopped", gap)
	}
	t.Logf("switch: %v between the old attempt's last record and every new subtask's first; AM switch downtime %d ms", gap, r.SwitchDowntime)
	waitExact(t, c, 3*time.Minute, out, args)
}
