package e2e

import (
	"bufio"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/tidestream/tide/examples"
	"github.com/tidestream/tide/internal/testkit"
	"github.com/tidestream/tide/standalone"
)

// bareStart is the mean wall time of `tide --version`: the process start cost every
// downtime figure is compared with.
func bareStart(b *testing.B) time.Duration {
	const runs = 5
	var total time.Duration
	for range runs {
		start := time.Now()
		if out, err := exec.Command(tideBin, "--version").CombinedOutput(); err != nil {
			b.Fatalf("tide --version: %v\n%s", err, out)
		}
		total += time.Since(start)
	}
	return total / runs
}

// BenchmarkScaleUp: TaskManager start → job RUNNING at the new parallelism, and →
// first completed checkpoint of the new attempt (records flow end to end again).
func BenchmarkScaleUp(b *testing.B) {
	benchRescale(b, "scale-up", 2, 3, func(c *standalone.LocalCluster) error {
		_, err := c.AddTaskManager(b.Context())
		return err
	})
}

// BenchmarkScaleDown: SIGKILL of a TaskManager → job RUNNING at the lower parallelism,
// and → first completed checkpoint of the new attempt.
func BenchmarkScaleDown(b *testing.B) {
	benchRescale(b, "scale-down", 3, 2, func(c *standalone.LocalCluster) error {
		return c.Signal("tm-1", syscall.SIGKILL)
	})
}

// benchRescale runs TopSpeedWindowing on from TaskManagers until a checkpoint completed,
// then times change → job RUNNING at parallelism to, and → its first checkpoint there.
func benchRescale(b *testing.B, what string, from, to int, change func(*standalone.LocalCluster) error) {
	bare := bareStart(b)
	var running, flowing time.Duration
	for i := 0; i < b.N; i++ {
		c := startCluster(b, examples.TopSpeedWindowingName, []string{"--cars", "8"}, from, reactive(b.TempDir(), "200 ms"))
		id := jobID(b, c)
		d := waitRunningAt(b, c, id, from)
		waitCheckpointIn(b, c, id, d.Attempt)
		start := time.Now()
		if err := change(c); err != nil {
			b.Fatalf("%s from %d TaskManagers: %v", what, from, err)
		}
		d = waitRunningAt(b, c, id, to)
		running += time.Since(start)
		waitCheckpointIn(b, c, id, d.Attempt)
		flowing += time.Since(start)
		_ = c.Stop(b.Context())
	}
	report(b, what, bare, running, flowing)
}

func report(b *testing.B, what string, bare, running, flowing time.Duration) {
	n := time.Duration(b.N)
	b.ReportMetric(float64((running / n).Milliseconds()), "ms-to-running")
	b.ReportMetric(float64((flowing / n).Milliseconds()), "ms-to-first-checkpoint")
	b.ReportMetric(float64(bare.Microseconds())/1000, "ms-bare-start")
	fmt.Printf("%s downtime: %s to RUNNING at the new parallelism, %s to its first checkpoint; bare `tide --version` start: %s\n",
		what, (running / n).Round(time.Millisecond), (flowing / n).Round(time.Millisecond), bare.Round(time.Millisecond))
}

// BenchmarkWordCountThroughput: words per second through WordCount (tokenize -> keyBy ->
// running count -> exactly-once file sink) at p=1 (one TaskManager, one slot: the pure
// per-record overhead) and p=2, each next to the hand-written single-goroutine loop doing
// the same work on the same input in the same run. p=2 runs twice: on two TaskManagers of
// one slot (half the records cross loopback TCP, encoded and decoded) and on one
// TaskManager of two slots (Flink's usual layout on one machine: taskmanager.numberOfTaskSlots
// set to its cores; every record stays in the process).
//
// The goals are measured on 2M words, where tide's start-up, deployment and final
// checkpoint are a good part of the time. p=2 runs once more on 20M words, which shows the
// throughput once the job runs (each figure then says so).
func BenchmarkWordCountThroughput(b *testing.B) {
	in := wordCountInput{dir: b.TempDir(), runs: 5, goal: true}
	in.words = writeWordCountInput(b, in.dir, 1)
	for _, l := range []wordCountLayout{{p: 1, tms: 1}, {p: 2, tms: 2}, {p: 2, tms: 1}} {
		b.Run(l.String(), func(b *testing.B) { benchWordCount(b, in, l) })
	}
	// Ten times as long each: start-up no longer dominates, and the machine's load
	// disturbs less, so fewer runs do.
	big := wordCountInput{dir: b.TempDir(), runs: 3}
	big.words = writeWordCountInput(b, big.dir, 10)
	for _, l := range []wordCountLayout{{p: 2, tms: 2}, {p: 2, tms: 1}} {
		b.Run(l.String()+"/words=20M", func(b *testing.B) { benchWordCount(b, big, l) })
	}
	if before := os.Getenv(beforeBinEnv); before != "" {
		b.Run("p=2-vs-before", func(b *testing.B) { benchWordCountBefore(b, in.dir, in.words, before) })
	}
}

// beforeBinEnv names a tide binary built from the commit before the latency work of issue 17
// (make bench builds 758deb6^): BenchmarkWordCountThroughput then also runs WordCount at p=2
// with the default execution.buffer-timeout on it and on this build, alternating, and prints
// today's words/s against it (goal: within 10 % or better).
const beforeBinEnv = "TIDE_BENCH_BEFORE_BIN"

// benchWordCount runs the hand-written loop and tide in turns, b.N times each and at
// least 5 (3 on the larger input), so that a change of the machine's load hits both
// alike, and compares the best run of each (the run least disturbed by the rest of the
// machine). It also prints the CPU
// time each spent per word (least of the runs): tide's is every process of the cluster,
// start-up and the final checkpoint included, so at p=2 it says how far two cores are from
// the loop's work, whatever the wall time.
func benchWordCount(b *testing.B, input wordCountInput, l wordCountLayout) {
	in, words := input.dir, input.words
	var base, perSec, runPerSec float64
	loopCPU, tideCPU := time.Duration(1<<62), time.Duration(1<<62)
	runs := max(b.N, input.runs)
	for range runs {
		cpu0 := testkit.CPUTime(b, syscall.RUSAGE_SELF)
		base = max(base, loopWordsPerSecond(b, in, words))
		loopCPU = min(loopCPU, testkit.CPUTime(b, syscall.RUSAGE_SELF)-cpu0)
		t, r, cpu := runWordCount(b, tideBin, in, words, l)
		perSec = max(perSec, float64(words)/t.Seconds())
		runPerSec = max(runPerSec, float64(words)/r.Seconds())
		tideCPU = min(tideCPU, cpu)
	}
	loopNs, tideNs := float64(loopCPU.Nanoseconds())/float64(words), float64(tideCPU.Nanoseconds())/float64(words)
	b.ReportMetric(perSec, "words/s")
	b.ReportMetric(runPerSec, "running-words/s")
	b.ReportMetric(base, "baseline-words/s")
	b.ReportMetric(perSec/base, "x-baseline")
	b.ReportMetric(runPerSec/base, "running-x-baseline")
	b.ReportMetric(tideNs, "cpu-ns/word")
	b.ReportMetric(loopNs, "baseline-cpu-ns/word")
	goal := map[int]string{1: ">= 0.5x", 2: ">= 0.8x"}[l.p]
	if !input.goal {
		goal = fmt.Sprintf("none here: the goal is measured on %d words", goalWords)
	}
	fmt.Printf("WordCount p=%d, %d words (best of %d runs each, alternating with the loop): %.0f words/s end to end (%d TaskManager(s) of %d slot(s), %d cores), %.0f words/s from RUNNING to FINISHED (start-up and deployment left out; the final checkpoint's commit included); hand-written single-goroutine loop: %.0f words/s; tide/loop = %.2fx end to end, %.2fx while running (goal: %s); CPU per word: tide %.0f ns (every process, start-up included), loop %.0f ns (%.1fx)\n",
		l.p, words, runs, perSec, l.tms, l.p/l.tms, runtime.NumCPU(), runPerSec, base, perSec/base, runPerSec/base, goal,
		tideNs, loopNs, tideNs/loopNs)
}

// benchWordCountBefore runs WordCount at p=2 with the default execution.buffer-timeout on
// this build and on before, alternating (so a change of the machine's load hits both alike).
func benchWordCountBefore(b *testing.B, in string, words int, before string) {
	var now, then time.Duration
	for i := 0; i < b.N; i++ {
		_, r, _ := runWordCount(b, tideBin, in, words, wordCountLayout{p: 2, tms: 2})
		now += r
		_, r, _ = runWordCount(b, before, in, words, wordCountLayout{p: 2, tms: 2})
		then += r
	}
	nowPerSec := float64(words) * float64(b.N) / now.Seconds()
	thenPerSec := float64(words) * float64(b.N) / then.Seconds()
	b.ReportMetric(nowPerSec, "running-words/s")
	b.ReportMetric(thenPerSec, "before-running-words/s")
	b.ReportMetric(nowPerSec/thenPerSec, "x-before")
	fmt.Printf("WordCount p=2, default execution.buffer-timeout: %.0f words/s from RUNNING to FINISHED, before the latency work (%s): %.0f; now/before = %.2fx (goal: >= 0.9x)\n",
		nowPerSec, filepath.Base(before), thenPerSec, nowPerSec/thenPerSec)
}

// wordCountInput is an input of the WordCount benchmark: its directory and number of
// words, the least number of runs of tide and of the loop on it, and whether issue 17's
// goals are measured on it.
type wordCountInput struct {
	dir   string
	words int
	runs  int
	goal  bool
}

// wordCountLayout is how a WordCount benchmark runs: at parallelism p on tms TaskManagers
// of p/tms slots each.
type wordCountLayout struct{ p, tms int }

func (l wordCountLayout) String() string {
	if l.tms == l.p {
		return fmt.Sprintf("p=%d", l.p)
	}
	return fmt.Sprintf("p=%d/taskmanagers=%d", l.p, l.tms)
}

// runWordCount runs WordCount over in on bin in layout l, checks its output, and
// returns the time from the processes' start to the AM's exit and from RUNNING to FINISHED,
// and the CPU time of all the cluster's processes.
func runWordCount(b *testing.B, bin, in string, words int, l wordCountLayout) (total, running, cpu time.Duration) {
	out := b.TempDir()
	cpu0 := testkit.CPUTime(b, syscall.RUSAGE_CHILDREN)
	// Timed from the processes' start to the AM's exit: start-up and deployment are
	// included, so the figure is a lower bound of the steady-state rate.
	start := time.Now()
	dyn := append(reactive(b.TempDir(), "1 s"), fmt.Sprintf("taskmanager.numberOfTaskSlots=%d", l.p/l.tms))
	c := testkit.StartLocal(b, bin, standalone.LocalOptions{Dynamic: dyn, JobName: examples.WordCountName,
		JobArgs: []string{"--input", in, "--output", out}, TaskManagers: l.tms})
	select {
	case <-c.AMDone():
	case <-time.After(10 * time.Minute):
		b.Fatal("WordCount did not finish")
	}
	total = time.Since(start)
	if err := c.AMErr(); err != nil {
		b.Fatalf("WordCount AM (%s): %v", bin, err)
	}
	lines, err := examples.ReadCommittedOutput(out)
	if err != nil {
		b.Fatal(err)
	}
	if len(lines) != words {
		b.Fatalf("WordCount (%s) committed %d running counts, want one per word (%d)", bin, len(lines), words)
	}
	span, err := runningToFinished(filepath.Join(c.LogDir(), "jobmanager.log"))
	if err != nil {
		b.Fatal(err)
	}
	// The TaskManagers exit once the AM told them the job ended; Stop waits for them, so
	// that their CPU time is counted.
	if err := c.Stop(context.Background()); err != nil {
		b.Logf("stopping the cluster: %v", err)
	}
	return total, span, testkit.CPUTime(b, syscall.RUSAGE_CHILDREN) - cpu0
}

// runningToFinished reads the AM's log: the time from the job's last switch to RUNNING to
// its switch to FINISHED (the job's own processing, start-up and deployment left out).
func runningToFinished(amLog string) (time.Duration, error) {
	data, err := os.ReadFile(amLog)
	if err != nil {
		return 0, err
	}
	var running, finished time.Time
	for _, line := range strings.Split(string(data), "\n") {
		if !strings.Contains(line, `msg="job status changed"`) {
			continue
		}
		ts, ok := strings.CutPrefix(line, "time=")
		if !ok {
			continue
		}
		at, err := time.Parse(time.RFC3339Nano, strings.Fields(ts)[0])
		if err != nil {
			return 0, fmt.Errorf("%s: %q: %w", amLog, line, err)
		}
		switch {
		case strings.Contains(line, " to=RUNNING"):
			running = at
		case strings.Contains(line, " to=FINISHED"):
			finished = at
		}
	}
	if running.IsZero() || finished.Before(running) {
		return 0, fmt.Errorf("%s: no switch to RUNNING followed by one to FINISHED", amLog)
	}
	return finished.Sub(running), nil
}

// goalWords is the size of the input issue 17's goals are measured on.
const goalWords = testkit.WordCountInputWords

// writeWordCountInput writes WordCount's benchmark input of scale×goalWords words into dir
// (testkit.WriteWordCountInput, which make pgo uses too) and returns its number of words.
func writeWordCountInput(b *testing.B, dir string, scale int) int {
	n, err := testkit.WriteWordCountInput(dir, scale)
	if err != nil {
		b.Fatal(err)
	}
	return n
}

// loopWordsPerSecond runs wordCountLoop over in once and returns its words/s.
func loopWordsPerSecond(b *testing.B, in string, words int) float64 {
	start := time.Now()
	n, err := wordCountLoop(in, filepath.Join(b.TempDir(), "counts.txt"))
	if err != nil {
		b.Fatal(err)
	}
	if n != words {
		b.Fatalf("the baseline loop counted %d words, want %d", n, words)
	}
	return float64(n) / time.Since(start).Seconds()
}

// wordCountLoop is the limit WordCount is measured against: one goroutine reads every file
// of in line by line, tokenizes with the job's own Tokenize, keeps the running count of every
// word in a map and writes every update as WordCount's sink does ("(word,count)\n",
// formatted by WordCount.AppendTo into the free space of a buffered writer) to out. It
// returns the number of words.
func wordCountLoop(in, out string) (int, error) {
	files, err := filepath.Glob(filepath.Join(in, "*"))
	if err != nil {
		return 0, err
	}
	f, err := os.Create(out)
	if err != nil {
		return 0, err
	}
	defer f.Close()
	w := bufio.NewWriterSize(f, 64<<10)
	counts := make(map[string]int64)
	n := 0
	for _, name := range files {
		r, err := os.Open(name)
		if err != nil {
			return 0, err
		}
		sc := bufio.NewScanner(r)
		for sc.Scan() {
			examples.Tokenize(sc.Text(), func(word string) {
				c := counts[word] + 1
				counts[word] = c
				n++
				w.Write(append(examples.WordCount{Word: word, Count: c}.AppendTo(w.AvailableBuffer()), '\n'))
			})
		}
		r.Close()
		if err := sc.Err(); err != nil {
			return 0, err
		}
	}
	if err := w.Flush(); err != nil {
		return 0, err
	}
	return n, f.Close()
}

// BenchmarkColdStart: N TaskManagers started together → job RUNNING at parallelism N
// (one slot each), and how many deployments that took (goal: 1), next to the bare binary's
// start. "unannounced" starts them beside a running AM that does not know they come (as
// bin/taskmanager.sh does): the submission stabilization window (1 s by default in reactive
// mode) absorbs the burst. "launched" is tide run --target local: the AM is told which
// TaskManagers it started with, and deploys when the last one registers (timed from the
// start of every process, the AM's included).
func BenchmarkColdStart(b *testing.B) {
	for _, n := range []int{2, 8} {
		for _, mode := range []string{"unannounced", "launched"} {
			b.Run(fmt.Sprintf("%s/N=%d", mode, n), func(b *testing.B) { benchColdStart(b, mode, n) })
		}
	}
}

func benchColdStart(b *testing.B, mode string, n int) {
	bare := bareStart(b)
	dyn := []string{
		"execution-mode=reactive",
		"taskmanager.numberOfTaskSlots=1",
		"heartbeat.timeout=30 min",
		"state.checkpoints.dir=file://" + b.TempDir(),
		"execution.checkpointing.interval=1 s",
	}
	var total time.Duration
	var deployments int64
	for i := 0; i < b.N; i++ {
		var c *standalone.LocalCluster
		var start time.Time
		if mode == "launched" {
			start = time.Now()
			c = startCluster(b, examples.TopSpeedWindowingName, []string{"--cars", "8"}, n, dyn)
		} else {
			c = startCluster(b, examples.TopSpeedWindowingName, []string{"--cars", "8"}, 0, dyn)
			jobID(b, c) // the AM serves its job and waits for resources
			start = time.Now()
			for range n {
				if _, err := c.AddTaskManager(b.Context()); err != nil {
					b.Fatal(err)
				}
			}
		}
		id := jobID(b, c)
		d := waitRunningAt(b, c, id, n)
		total += time.Since(start)
		deployments += d.Attempt
		_ = c.Stop(b.Context())
	}
	avg := total / time.Duration(b.N)
	perRun := float64(deployments) / float64(b.N)
	b.ReportMetric(float64(avg.Milliseconds()), "ms-to-running")
	b.ReportMetric(perRun, "deployments")
	b.ReportMetric(float64(bare.Microseconds())/1000, "ms-bare-start")
	fmt.Printf("cold start, %d TaskManagers %s: %s to RUNNING at parallelism %d in %.1f deployment(s) (goal: <= 2s, 1); bare `tide --version` start: %s (%.0fx)\n",
		n, mode, avg.Round(time.Millisecond), n, perRun, bare.Round(time.Millisecond), float64(avg)/float64(bare))
}
