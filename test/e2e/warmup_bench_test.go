package e2e

import (
	"bufio"
	"bytes"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/tidestream/tide/api"
	"github.com/tidestream/tide/examples"
	"github.com/tidestream/tide/internal/testkit"
	"github.com/tidestream/tide/standalone"
	"github.com/tidestream/tide/test/hadoop/hadooptest"
)

// BenchmarkWarmupDowntime is issue 14's downtime table (make bench): for 1 MiB and 100 MiB
// of keyed state (and 1 GiB with TIDE_BENCH_WARMUP_1G=1), the downtime of a scale-up onto
// a new TaskManager and of an evacuation with warm-up against without, and of a
// TaskManager SIGKILL with a standby copy against without, all in one run. Downtime is
// measured where the records are: the job's keyed step appends each record's processing
// time (CheckableCount --progress), and a switch's downtime runs from the last record the
// old attempt processed to the moment every subtask of the new attempt has processed its
// first. The state is CheckableCount --ballast filler on the pebble backend with
// incremental checkpoints and local recovery (the best a move without warm-up can do:
// Flink's setup), checkpoints every second on file://.
//
// It runs only with TIDE_BENCH_WARMUP=1 (.ci/bench.sh sets it): at 100 MiB it takes minutes.
// TIDE_BENCH_WARMUP_STORAGE=hdfs puts the checkpoints on the HDFS mini-cluster instead.
func BenchmarkWarmupDowntime(b *testing.B) {
	if os.Getenv("TIDE_BENCH_WARMUP") != "1" {
		b.Skip("the warm-up downtime table runs with TIDE_BENCH_WARMUP=1 (make bench sets it); TIDE_BENCH_WARMUP_1G=1 adds 1 GiB")
	}
	sizes := []int64{1 << 20, 100 << 20}
	if s := os.Getenv("TIDE_BENCH_WARMUP_SIZES"); s != "" { // e.g. "1" (MiB) for a quick look
		sizes = nil
		for _, f := range strings.Fields(s) {
			n, err := strconv.ParseInt(f, 10, 64)
			if err != nil || n <= 0 {
				b.Fatalf("TIDE_BENCH_WARMUP_SIZES=%q: want sizes in MiB separated by spaces", s)
			}
			sizes = append(sizes, n<<20)
		}
	}
	if os.Getenv("TIDE_BENCH_WARMUP_1G") == "1" {
		sizes = append(sizes, 1<<30)
	}
	var table []downtimeRow
	for _, size := range sizes {
		row := downtimeRow{size: size}
		b.Run(fmtSize(size), func(b *testing.B) {
			for i := 0; i < b.N; i++ {
				var warm moveTimes
				if !lossOnly() {
					warm = runMoves(b, size, "warm-up", true, false)
				}
				var cold, standby moveTimes
				if !warmOnly() {
					cold = runMoves(b, size, "no warm-up", false, false)
					standby = runMoves(b, size, "standby", false, true)
				}
				row.add(warm, cold, standby)
			}
			row.div(b.N)
			b.ReportMetric(float64(row.upWarm.Milliseconds()), "ms-scaleup-warm")
			b.ReportMetric(float64(row.upCold.Milliseconds()), "ms-scaleup-cold")
			b.ReportMetric(float64(row.evacWarm.Milliseconds()), "ms-evacuation-warm")
			b.ReportMetric(float64(row.evacCold.Milliseconds()), "ms-evacuation-cold")
			b.ReportMetric(float64(row.lossStandby.Milliseconds()), "ms-loss-standby")
			b.ReportMetric(float64(row.lossCold.Milliseconds()), "ms-loss-cold")
		})
		table = append(table, row)
	}
	printDowntimeTable(table)
}

// moveTimes are the downtimes of one cluster's moves (0: not measured in that run).
type moveTimes struct {
	up, evac, loss time.Duration
	lossInfo       string
	// where: where each move's downtime went (AM switch, slowest restore), for the table
	where                []string
	upBytes, evacBytes   int64
	upWarmup, evacWarmup time.Duration
}

type downtimeRow struct {
	size                               int64
	where                              []string
	upWarm, upCold, evacWarm, evacCold time.Duration
	lossStandby, lossCold              time.Duration
	upWarmBytes, upColdBytes           int64
	upWarmup, evacWarmup               time.Duration
	evacWarmBytes, evacColdBytes       int64
}

func (r *downtimeRow) add(warm, cold, standby moveTimes) {
	for _, m := range []moveTimes{warm, cold, standby} {
		r.where = append(r.where, m.where...)
	}
	r.upWarm += warm.up
	r.evacWarm += warm.evac
	r.upCold += cold.up
	r.evacCold += cold.evac
	r.lossCold += cold.loss
	r.lossStandby += standby.loss
	r.upWarmBytes += warm.upBytes
	r.upColdBytes += cold.upBytes
	r.evacWarmBytes += warm.evacBytes
	r.evacColdBytes += cold.evacBytes
	r.upWarmup += warm.upWarmup
	r.evacWarmup += warm.evacWarmup
}

func (r *downtimeRow) div(n int) {
	d := time.Duration(n)
	for _, p := range []*time.Duration{&r.upWarm, &r.upCold, &r.evacWarm, &r.evacCold, &r.lossStandby, &r.lossCold, &r.upWarmup, &r.evacWarmup} {
		*p /= d
	}
	for _, p := range []*int64{&r.upWarmBytes, &r.upColdBytes, &r.evacWarmBytes, &r.evacColdBytes} {
		*p /= int64(n)
	}
}

func printDowntimeTable(rows []downtimeRow) {
	ms := func(d time.Duration) string { return fmt.Sprintf("%d ms", d.Milliseconds()) }
	ratio := func(a, b time.Duration) string {
		if b <= 0 {
			return "-"
		}
		return fmt.Sprintf("%.2fx", float64(a)/float64(b))
	}
	var buf bytes.Buffer
	fmt.Fprintf(&buf, "\nswitch downtime: last record before the switch -> every subtask's first record after it (CheckableCount --ballast, pebble, incremental checkpoints every 1 s, local recovery, checkpoints on %s)\n", benchStorage())
	fmt.Fprintf(&buf, "%-8s | %-30s | %-30s | %-30s\n", "state", "scale-up 2->3 warm / cold", "evacuation 3->2 warm / cold", "TM SIGKILL standby / none")
	for _, r := range rows {
		fmt.Fprintf(&buf, "%-8s | %-30s | %-30s | %-30s\n", fmtSize(r.size),
			fmt.Sprintf("%s / %s (%s)", ms(r.upWarm), ms(r.upCold), ratio(r.upCold, r.upWarm)),
			fmt.Sprintf("%s / %s (%s)", ms(r.evacWarm), ms(r.evacCold), ratio(r.evacCold, r.evacWarm)),
			fmt.Sprintf("%s / %s (%s)", ms(r.lossStandby), ms(r.lossCold), ratio(r.lossCold, r.lossStandby)))
	}
	fmt.Fprintf(&buf, "(ratios: without / with)\n")
	fmt.Fprintf(&buf, "%-8s | %-40s | %-40s\n", "state", "scale-up: warm-up time, bytes warm / cold", "evacuation: warm-up time, bytes warm / cold")
	for _, r := range rows {
		fmt.Fprintf(&buf, "%-8s | %-40s | %-40s\n", fmtSize(r.size),
			fmt.Sprintf("%s, %s / %s", ms(r.upWarmup), fmtSize(r.upWarmBytes), fmtSize(r.upColdBytes)),
			fmt.Sprintf("%s, %s / %s", ms(r.evacWarmup), fmtSize(r.evacWarmBytes), fmtSize(r.evacColdBytes)))
	}
	fmt.Fprintf(&buf, "where the downtime went (record gap; AM: switch start -> every new subtask running; the slowest subtask restore):\n")
	for _, r := range rows {
		for _, w := range r.where {
			fmt.Fprintf(&buf, "%-8s | %s\n", fmtSize(r.size), w)
		}
	}
	if len(rows) > 1 {
		first, last := rows[0], rows[len(rows)-1]
		fmt.Fprintf(&buf, "%s / %s: scale-up warm %s (goal <= 2x), cold %s; evacuation warm %s, cold %s; TM loss standby %s, none %s\n",
			fmtSize(last.size), fmtSize(first.size),
			ratio(last.upWarm, first.upWarm), ratio(last.upCold, first.upCold),
			ratio(last.evacWarm, first.evacWarm), ratio(last.evacCold, first.evacCold),
			ratio(last.lossStandby, first.lossStandby), ratio(last.lossCold, first.lossCold))
	}
	os.Stdout.Write(buf.Bytes())
}

func fmtSize(n int64) string {
	switch {
	case n >= 1<<30 && n%(1<<30) == 0:
		return fmt.Sprintf("%d GiB", n>>30)
	case n >= 1<<20:
		return fmt.Sprintf("%.0f MiB", float64(n)/(1<<20))
	case n >= 1<<10:
		return fmt.Sprintf("%.0f KiB", float64(n)/(1<<10))
	}
	return fmt.Sprintf("%d B", n)
}

// benchStorage is where the benchmark's checkpoints go: file (default) or hdfs
// (TIDE_BENCH_WARMUP_STORAGE=hdfs, on the mini-cluster of TIDE_HADOOP_ENV).
func benchStorage() string {
	if os.Getenv("TIDE_BENCH_WARMUP_STORAGE") == "hdfs" {
		return "hdfs"
	}
	return "file"
}

// lossOnly: TIDE_BENCH_WARMUP_ONLY=loss times only the TaskManager SIGKILL, with a
// standby and without (each from two TaskManagers), for a quick look at one size.
func lossOnly() bool { return os.Getenv("TIDE_BENCH_WARMUP_ONLY") == "loss" }

// warmOnly: TIDE_BENCH_WARMUP_ONLY=warm times only the moves with warm-up (scale-up and
// evacuation), for a quick look at where a warmed-up switch spends its time.
func warmOnly() bool { return os.Getenv("TIDE_BENCH_WARMUP_ONLY") == "warm" }

// benchKeys: keys of the ballast job (every key group of the default 128 gets some).
const benchKeys = 2048

// runMoves starts CheckableCount with size bytes of keyed state on two TaskManagers and
// times its moves. warm: warm-up on; then a third TaskManager joins (scale-up) and its node
// is evacuated. Without warm-up and standby (the baseline) the same, and then tm-1 is
// killed. standby: num.standby.replicas=1 on two TaskManagers, tm-1 killed.
func runMoves(b *testing.B, size int64, mode string, warm, standby bool) moveTimes {
	dir := b.TempDir()
	progress := filepath.Join(dir, "progress")
	args := []string{"--records", "1000000000000", "--keys", strconv.Itoa(benchKeys), "--rate", "2000",
		"--ballast", strconv.FormatInt(size/benchKeys, 10), "--progress", progress, "--output", filepath.Join(dir, "out")}
	ckpt := "file://" + filepath.Join(dir, "checkpoints")
	if benchStorage() == "hdfs" {
		ckpt, _ = hdfsCheckpointRoot(b, hadooptest.Require(b))
	}
	dyn := append(hdfsSettings(ckpt, "1 s"),
		"state.backend.type=pebble", "execution.checkpointing.incremental=true", "state.backend.local-recovery=true")
	if warm {
		dyn = append(dyn, "state.warmup.timeout=10 min", "max.warmup.replicas=8")
	}
	if standby {
		dyn = append(dyn, "num.standby.replicas=1")
	}
	c := startCluster(b, examples.CheckableCountName, args, 2, dyn)
	defer c.Stop(b.Context())
	if keep := os.Getenv("TIDE_BENCH_WARMUP_LOGS"); keep != "" { // a directory to copy the cluster's logs into
		defer func() {
			dst := filepath.Join(keep, strings.ReplaceAll(fmtSize(size)+"-"+mode, " ", ""))
			if err := os.CopyFS(dst, os.DirFS(c.LogDir())); err != nil {
				b.Logf("keeping the logs in %s: %v", dst, err)
			}
		}()
	}
	id := jobID(b, c)
	log := &progressLog{path: progress}
	d := waitLong(b, c, id, 2)
	waitState(b, c, id, d.Attempt, size)
	var m moveTimes
	if standby {
		waitLongFor(b, "standby copies caught up", 20*time.Minute, func() (bool, error) {
			text, err := metricsText(c)
			if err != nil {
				return false, err
			}
			// The gauges are sampled together: a lag of 0 counts only in a sample that
			// already knew the checkpoint holding the whole state (a sample from before it
			// showed lag 0 while the copies had nothing, and the kill then found none).
			return metricValue(text, "lastCheckpointSize") >= float64(size) &&
				metricValue(text, "standbyCopies") >= 2 && metricValue(text, "standbyLag") == 0, nil
		})
		m.loss, m.lossInfo = timeMove(b, c, id, log, d.Attempt, 1, "RESOURCE_LOST", func() error { return c.Signal("tm-1", syscall.SIGKILL) })
		b.Logf("%s %s: TaskManager SIGKILL %v (%s)", fmtSize(size), mode, m.loss, m.lossInfo)
		m.note(b, c, id, mode+" TM SIGKILL", m.loss)
		return m
	}
	if lossOnly() {
		m.loss, m.lossInfo = timeMove(b, c, id, log, d.Attempt, 1, "RESOURCE_LOST", func() error { return c.Signal("tm-1", syscall.SIGKILL) })
		b.Logf("%s %s: TaskManager SIGKILL %v (%s)", fmtSize(size), mode, m.loss, m.lossInfo)
		m.note(b, c, id, mode+" TM SIGKILL", m.loss)
		return m
	}
	var r api.Rescale
	m.up, r = timeMoveRescale(b, c, id, log, d.Attempt, 3, "NEW_RESOURCE_AVAILABLE", func() error {
		_, err := c.AddTaskManager(b.Context())
		return err
	})
	m.upBytes, m.upWarmup = r.BytesMoved, time.Duration(r.WarmupDuration)*time.Millisecond
	b.Logf("%s %s: scale-up %v (rescale %+v)", fmtSize(size), mode, m.up, r)
	m.note(b, c, id, mode+" scale-up", m.up)
	d = waitLong(b, c, id, 3)
	waitCheckpointLong(b, c, id, d.Attempt)
	m.evac, r = timeMoveRescale(b, c, id, log, d.Attempt, 2, "BLOCKLIST_EVACUATION", func() error {
		out, err := tideCmd(b, tideBin, time.Minute, "blocklist", "add", "local-3", "--evacuate", "--timeout", "30m",
			"--cause", "bench", "-m", c.RESTAddress())
		if err != nil {
			return fmt.Errorf("tide blocklist add --evacuate: %w\n%s", err, out)
		}
		return nil
	})
	m.evacBytes, m.evacWarmup = r.BytesMoved, time.Duration(r.WarmupDuration)*time.Millisecond
	b.Logf("%s %s: evacuation %v (rescale %+v)", fmtSize(size), mode, m.evac, r)
	m.note(b, c, id, mode+" evacuation", m.evac)
	if !warm {
		d = waitLong(b, c, id, 2)
		waitCheckpointLong(b, c, id, d.Attempt)
		m.loss, m.lossInfo = timeMove(b, c, id, log, d.Attempt, 1, "RESOURCE_LOST", func() error { return c.Signal("tm-1", syscall.SIGKILL) })
		b.Logf("%s %s: TaskManager SIGKILL %v (%s)", fmtSize(size), mode, m.loss, m.lossInfo)
		m.note(b, c, id, mode+" TM SIGKILL", m.loss)
	}
	return m
}

// note records where the last move's downtime went: the AM's switch downtime of the
// newest rescale and the slowest restore of its attempt.
func (m *moveTimes) note(b *testing.B, c *standalone.LocalCluster, id, what string, gap time.Duration) {
	b.Helper()
	var rs api.Rescales
	if err := rest(c, "/jobs/"+id+"/rescales", &rs); err != nil || len(rs.Rescales) == 0 {
		b.Fatalf("%s: reading the rescales: %v", what, err)
	}
	r := rs.Rescales[len(rs.Rescales)-1]
	slow, err := slowestRestore(c.LogDir(), r.Attempt)
	if err != nil {
		b.Fatal(err)
	}
	w := fmt.Sprintf("%-24s gap %5d ms; AM %5d ms; %s", what, gap.Milliseconds(), r.SwitchDowntime, slow)
	b.Log(w)
	m.where = append(m.where, w)
}

// timeMove makes a change and returns the record gap it caused, with the rescale's summary.
func timeMove(b *testing.B, c *standalone.LocalCluster, id string, log *progressLog, old int64, to int, trigger string, change func() error) (time.Duration, string) {
	gap, r := timeMoveRescale(b, c, id, log, old, to, trigger, change)
	return gap, fmt.Sprintf("AM switch downtime %d ms, %d key groups moved, %d bytes moved, restores: %d bytes local, %d downloaded",
		r.SwitchDowntime, r.KeyGroupsMoved, r.BytesMoved, r.RestoreLocalBytes, r.RestoreDownloadedBytes)
}

func timeMoveRescale(b *testing.B, c *standalone.LocalCluster, id string, log *progressLog, old int64, to int, trigger string, change func() error) (time.Duration, api.Rescale) {
	b.Helper()
	if err := change(); err != nil {
		b.Fatal(err)
	}
	d := waitLong(b, c, id, to)
	var gap time.Duration
	waitLongFor(b, fmt.Sprintf("every subtask of attempt %d processing records", d.Attempt), 10*time.Minute, func() (bool, error) {
		g, ok, err := log.gap(old, d.Attempt, to)
		gap = g
		return ok, err
	})
	// The restore's bytes come with the TaskManagers' task metrics, sent every second.
	time.Sleep(3 * time.Second)
	var r api.Rescale
	waitLongFor(b, "the "+trigger+" rescale with its switch downtime", 5*time.Minute, func() (bool, error) {
		var rs api.Rescales
		if err := rest(c, "/jobs/"+id+"/rescales", &rs); err != nil {
			return false, err
		}
		for i := len(rs.Rescales) - 1; i >= 0; i-- {
			if x := rs.Rescales[i]; x.Trigger == trigger && x.Outcome == "COMPLETED" && x.Attempt == d.Attempt {
				r = x
				return x.SwitchDowntime >= 0, nil
			}
		}
		return false, nil
	})
	return gap, r
}

// progressLog reads CheckableCount's --progress file as it grows.
type progressLog struct {
	path  string
	off   int64
	part  []byte
	last  map[int64]int64         // attempt -> newest record time (ns)
	first map[int64]map[int]int64 // attempt -> subtask -> first record time (ns)
}

func (l *progressLog) read() error {
	f, err := os.Open(l.path)
	if err != nil {
		return err
	}
	defer f.Close()
	if _, err := f.Seek(l.off, io.SeekStart); err != nil {
		return err
	}
	data, err := io.ReadAll(bufio.NewReader(f))
	if err != nil {
		return err
	}
	l.off += int64(len(data))
	data = append(l.part, data...)
	end := bytes.LastIndexByte(data, '\n')
	if end < 0 {
		l.part = data
		return nil
	}
	l.part = append([]byte(nil), data[end+1:]...)
	if l.last == nil {
		l.last, l.first = map[int64]int64{}, map[int64]map[int]int64{}
	}
	for _, line := range strings.Split(string(data[:end]), "\n") {
		f := strings.Fields(line)
		if len(f) != 3 {
			return fmt.Errorf("%s: malformed line %q", l.path, line)
		}
		attempt, err1 := strconv.ParseInt(f[0], 10, 64)
		subtask, err2 := strconv.Atoi(f[1])
		ns, err3 := strconv.ParseInt(f[2], 10, 64)
		if err1 != nil || err2 != nil || err3 != nil {
			return fmt.Errorf("%s: malformed line %q", l.path, line)
		}
		attempt &= 0xffffffff // the AM's attempt number (TaskManagers may carry the AM run above it)
		l.last[attempt] = max(l.last[attempt], ns)
		if l.first[attempt] == nil {
			l.first[attempt] = map[int]int64{}
		}
		if t, ok := l.first[attempt][subtask]; !ok || ns < t {
			l.first[attempt][subtask] = ns
		}
	}
	return nil
}

// gap is the time from the last record attempt old processed to the time every one of
// the p subtasks of attempt next had processed its first; ok once they all have.
func (l *progressLog) gap(old, next int64, p int) (time.Duration, bool, error) {
	if err := l.read(); err != nil {
		return 0, false, err
	}
	if len(l.first[next]) < p {
		return 0, false, nil
	}
	var flowing int64
	for _, t := range l.first[next] {
		flowing = max(flowing, t)
	}
	lastOld, ok := l.last[old]
	if !ok {
		return 0, false, fmt.Errorf("%s: no record of attempt %d", l.path, old)
	}
	return time.Duration(flowing - lastOld), true, nil
}

// waitLongFor is testkit.WaitFor with a deadline for moves of a GiB on a loaded machine.
func waitLongFor(b *testing.B, what string, deadline time.Duration, cond func() (bool, error)) {
	b.Helper()
	end := time.Now().Add(deadline)
	var last error
	for {
		ok, err := cond()
		if ok {
			return
		}
		last = err
		if time.Now().After(end) {
			b.Fatalf("timed out after %v waiting for %s (last error: %v)", deadline, what, last)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

func waitLong(b *testing.B, c *standalone.LocalCluster, id string, p int) testkit.JobDetails {
	b.Helper()
	var d testkit.JobDetails
	waitLongFor(b, fmt.Sprintf("job RUNNING at parallelism %d", p), 20*time.Minute, func() (bool, error) {
		if err := rest(c, "/jobs/"+id, &d); err != nil {
			return false, err
		}
		return testkit.RunningAt(d, p) == nil, nil
	})
	return d
}

func waitCheckpointLong(b *testing.B, c *standalone.LocalCluster, id string, attempt int64) {
	b.Helper()
	waitLongFor(b, fmt.Sprintf("a checkpoint of attempt %d", attempt), 20*time.Minute, func() (bool, error) {
		var s api.CheckpointingStatistics
		if err := rest(c, "/jobs/"+id+"/checkpoints", &s); err != nil {
			return false, err
		}
		return s.Latest.Completed != nil && s.Latest.Completed.Attempt >= attempt, nil
	})
}

// waitState waits for a completed checkpoint of attempt holding the job's whole ballast.
func waitState(b *testing.B, c *standalone.LocalCluster, id string, attempt, size int64) {
	b.Helper()
	waitLongFor(b, fmt.Sprintf("a checkpoint of attempt %d with %s of state", attempt, fmtSize(size)), 20*time.Minute, func() (bool, error) {
		var s api.CheckpointingStatistics
		if err := rest(c, "/jobs/"+id+"/checkpoints", &s); err != nil {
			return false, err
		}
		l := s.Latest.Completed
		return l != nil && l.Attempt >= attempt && l.StateSize >= size, nil
	})
}
