package exec_test

import (
	"context"
	"encoding/binary"
	"fmt"
	"io"
	"os"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/tidestream/tide/core/jobgraph"
	"github.com/tidestream/tide/state"
	"github.com/tidestream/tide/stream"
	"github.com/tidestream/tide/tm/exec"
)

// BenchmarkCheckpointThroughput runs a keyed job (numbers → keyBy → a 1000-byte
// accumulator per key, updated by every record) with TIDE_BENCH_CKPT_MIB of keyed state
// (default 64; make bench also runs 1024) at full speed on one TaskManager, and measures
// the keyed subtask's records/s while checkpoints are in flight (barrier to completion)
// against the records/s between them, in the same run: the heap backend with
// copy-on-write snapshots (a view at the barrier, encoded during the upload) and, as the
// baseline, with its state encoded at the barrier (heap-sync:
// StateBackendConfig.SynchronousHeapSnapshots), pebble with full asynchronous checkpoints
// (a snapshot at the barrier, the state file streamed from it) and pebble with
// incremental ones (a Pebble checkpoint at the barrier, new tables uploaded), whose
// uploads run at low priority, next to the same with uploads at normal priority
// (pebble-incremental-normal-priority: StateBackendConfig.NormalPriorityUploads). It also
// prints the longest the subtask processed nothing and the synchronous part of the
// barrier. The heap backend runs up to 1 GiB (its upload streams the view, holding no
// encoded copy), its encoded-at-the-barrier baseline up to 256 MiB. At the end it prints
// every backend's during/between side by side with the load average.
// Run with -benchtime 1x; benchmarks never fail on timing.
func BenchmarkCheckpointThroughput(b *testing.B) {
	mib := int64(64)
	if v := os.Getenv("TIDE_BENCH_CKPT_MIB"); v != "" {
		n, err := strconv.ParseInt(v, 10, 64)
		if err != nil || n <= 0 {
			b.Fatalf("TIDE_BENCH_CKPT_MIB=%q: want a positive number of MiB", v)
		}
		mib = n
	}
	modes := []ckptMode{{name: "pebble-incremental", backend: state.Pebble, incremental: true},
		{name: "pebble-incremental-normal-priority", backend: state.Pebble, incremental: true, normalPriority: true, baselineOf: "pebble-incremental"},
		{name: "pebble-full", backend: state.Pebble}}
	if mib <= 1024 {
		modes = append(modes, ckptMode{name: "heap", backend: state.Hashmap})
	}
	if mib <= 256 {
		modes = append(modes, ckptMode{name: "heap-sync", backend: state.Hashmap, syncHeap: true, baselineOf: "heap"})
	}
	load0 := loadAverage()
	var ran []string
	for _, m := range modes {
		if b.Run(fmt.Sprintf("%dMiB/%s", mib, m.name), func(b *testing.B) {
			for range b.N {
				benchCheckpointThroughput(b, mib<<20, m)
			}
		}) {
			ran = append(ran, m.name)
		}
	}
	// The backends side by side: one run, so the same machine load.
	var line []string
	for _, name := range ran {
		if r, ok := ckptResults[fmt.Sprint(mib<<20, name)]; ok {
			line = append(line, fmt.Sprintf("%s %.2f", name, r.ratio))
		}
	}
	if len(line) > 0 {
		fmt.Printf("\n%d MiB of keyed state, records/s during/between checkpoints in this run (goal >= 0.80): %s; load average %s at the start, %s at the end\n",
			mib, strings.Join(line, ", "), load0, loadAverage())
	}
}

// loadAverage is the machine's 1-minute load average ("?" when unknown): the benchmark
// shares the machine, so results say what else ran.
func loadAverage() string {
	b, err := os.ReadFile("/proc/loadavg")
	if f := strings.Fields(string(b)); err == nil && len(f) > 0 {
		return f[0]
	}
	return "?"
}

// ckptMode is one backend setup of BenchmarkCheckpointThroughput.
type ckptMode struct {
	name        string
	backend     state.Type
	incremental bool
	syncHeap    bool // the heap state encoded at the barrier (the copy-on-write baseline)
	// normalPriority: uploads at the TaskManager's priority (the low-priority baseline).
	normalPriority bool
	// baselineOf names the mode this one is the same-run baseline of.
	baselineOf string
}

// ckptResult is what a run measured, for the comparison with its baseline.
type ckptResult struct {
	sync  time.Duration
	ratio float64
}

// ckptResults holds the runs' results by size and mode (the modes run in order, each
// baseline after the mode it is the baseline of).
var ckptResults = map[string]ckptResult{}

// ckptValue is the size of each key's accumulator.
const ckptValue = 1000

// ckptManaged is the TaskManager's managed memory in the benchmark (what 0.4 of a
// 1.25 GiB TaskManager process gives): the pebble instance's block cache and memtables.
const ckptManaged = 512 << 20

// throughputJob builds numbers 1.. → keyBy(n mod keys) → an accumulator of ckptValue
// bytes per key (random bytes derived from the key, so tables do not compress, and a
// counter every record bumps) → a print sink into nothing (results only at the end).
func throughputJob(keys int64) *stream.Job {
	job := stream.NewJob("checkpoint-throughput", 1, 128)
	nums := stream.NumberSequenceSource(job, "numbers", stream.NumberSequence{From: 1, To: 1 << 60, Splits: 1})
	keyed := stream.KeyBy(nums, func(v int64) int64 { return v % keys })
	acc := stream.Aggregate(keyed, "state", stream.Aggregator[int64, int64, []byte, int64]{
		Add: func(acc []byte, v int64) []byte {
			if len(acc) != ckptValue {
				acc = make([]byte, ckptValue)
				x := uint64(v%keys)*0x9e3779b97f4a7c15 + 1
				for i := 8; i+8 <= ckptValue; i += 8 {
					x ^= x << 13
					x ^= x >> 7
					x ^= x << 17
					binary.LittleEndian.PutUint64(acc[i:], x)
				}
			}
			binary.LittleEndian.PutUint64(acc, binary.LittleEndian.Uint64(acc)+1)
			return acc
		},
		Result:   func(k int64, acc []byte) int64 { return int64(binary.LittleEndian.Uint64(acc)) },
		AccCodec: stream.BytesCodec{},
	}, stream.EmitAtEnd)
	stream.Print(acc, "discard", io.Discard)
	return job
}

// rateSample is the keyed subtask's records-in count at a time.
type rateSample struct {
	at      time.Time
	records int64
}

type ckptWindow struct {
	start, end time.Time
	sync       time.Duration
	uploaded   int64
}

func benchCheckpointThroughput(b *testing.B, size int64, m ckptMode) {
	backend, incremental := m.backend, m.incremental
	keys := size / ckptValue
	job := throughputJob(keys)
	dir := b.TempDir()
	// A TaskManager's managed memory for its pebble instances (block cache and memtables).
	mem, err := state.NewMemory(ckptManaged, 1)
	if err != nil {
		b.Fatal(err)
	}
	defer mem.Close()
	am := newFakeAM(b, job, 1, func(c *exec.Config) {
		c.StateBackend = exec.StateBackendConfig{Type: backend, Dir: dir, Incremental: incremental, Memory: mem, SynchronousHeapSnapshots: m.syncHeap,
			UploadNice: map[bool]int{false: 5}[m.normalPriority]}
	})
	am.checkpointing = true
	keyedVertex := ""
	for _, e := range am.graph.Edges {
		if e.Kind == jobgraph.Hash {
			keyedVertex = e.To
		}
	}
	sample := func() (exec.SubtaskMetrics, bool) {
		for _, m := range am.tms[0].exec.Metrics() {
			if m.Vertex == keyedVertex {
				return m, true
			}
		}
		return exec.SubtaskMetrics{}, false
	}
	t0 := time.Now()
	am.deploy(1)
	b.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		am.tms[0].exec.Cancel(ctx, am.attempt)
	})
	// Fill: every key gets its value once.
	for {
		m, ok := sample()
		if ok && m.RecordsIn >= keys {
			break
		}
		am.mu.Lock()
		failures := am.failures
		am.mu.Unlock()
		if len(failures) > 0 {
			b.Fatalf("failures: %v", failures)
		}
		time.Sleep(50 * time.Millisecond)
	}
	fill := time.Since(t0)

	var mu sync.Mutex
	var samples []rateSample
	stop := make(chan struct{})
	sampled := make(chan struct{})
	go func() {
		defer close(sampled)
		tick := time.NewTicker(20 * time.Millisecond)
		defer tick.Stop()
		for {
			select {
			case <-stop:
				return
			case now := <-tick.C:
				if m, ok := sample(); ok {
					mu.Lock()
					samples = append(samples, rateSample{at: now, records: m.RecordsIn})
					mu.Unlock()
				}
			}
		}
	}()
	checkpoint := func() ckptWindow {
		am.mu.Lock()
		want := am.nextCkpt + 1
		am.mu.Unlock()
		w := ckptWindow{start: time.Now()}
		am.trigger()
		am.waitForLong("checkpoint "+strconv.FormatInt(want, 10), 30*time.Minute, func() bool { return am.completed >= want })
		w.end = time.Now()
		if m, ok := sample(); ok {
			w.sync, w.uploaded = m.SyncDuration, m.UploadedBytes
		}
		return w
	}
	quiet := 3 * time.Second
	// The first checkpoint uploads the whole state; the next ones what changed since.
	var windows []ckptWindow
	time.Sleep(quiet)
	for range 3 {
		windows = append(windows, checkpoint())
		time.Sleep(quiet)
	}
	close(stop)
	<-sampled
	sm, _ := sample()

	mode := string(backend)
	switch {
	case backend == state.Pebble:
		mode += map[bool]string{true: " incremental", false: " full"}[incremental]
		if m.normalPriority {
			mode += " (uploads at normal priority)"
		}
	case m.syncHeap:
		mode += " (encoded at the barrier)"
	default:
		mode += " (copy-on-write)"
	}
	fmt.Printf("\n%s, %d MiB of keyed state (%d keys of %d bytes), filled in %s at %.0f records/s\n",
		mode, size>>20, keys, ckptValue, roundMs(fill), float64(keys)/fill.Seconds())
	outside, during, stall := splitRates(samples, windows)
	for i, w := range windows {
		fmt.Printf("  checkpoint %d: %s barrier to completion, synchronous part %s, uploaded %.1f MB\n",
			i+1, roundMs(w.end.Sub(w.start)), roundMs(w.sync), float64(w.uploaded)/1e6)
	}
	fmt.Printf("  records/s: %.0f between checkpoints, %.0f during them: during/between = %.2f (goal >= 0.80); longest time without a record processed: %s during a checkpoint, %s between\n",
		outside.rate(), during.rate(), during.rate()/outside.rate(), roundMs(stall[1]), roundMs(stall[0]))
	fmt.Printf("  uploads that waited for the previous one: %d; load average %s\n", sm.UploadWaits, loadAverage())
	b.ReportMetric(during.rate()/outside.rate(), "during/between")
	var longest time.Duration
	for _, w := range windows {
		longest = max(longest, w.sync)
	}
	ckptResults[fmt.Sprint(size, m.name)] = ckptResult{sync: longest, ratio: during.rate() / outside.rate()}
	if cur, ok := ckptResults[fmt.Sprint(size, m.baselineOf)]; ok && m.baselineOf != "" {
		base := ckptResults[fmt.Sprint(size, m.name)]
		fmt.Printf("\n%s, %d MiB, against its baseline %s in this run: the barrier's synchronous part (longest of 3) %s vs %s; during/between %.2f vs %.2f\n",
			m.baselineOf, size>>20, m.name, cur.sync.Round(time.Microsecond), base.sync.Round(time.Microsecond), cur.ratio, base.ratio)
	}
}

type rateSum struct {
	records int64
	elapsed time.Duration
}

func (r rateSum) rate() float64 {
	if r.elapsed <= 0 {
		return 0
	}
	return float64(r.records) / r.elapsed.Seconds()
}

// splitRates adds up the sampled intervals that overlap a checkpoint window (during) and
// those that do not (outside), and the longest run of intervals without progress of each
// kind (stall[0] outside, stall[1] during).
func splitRates(samples []rateSample, windows []ckptWindow) (outside, during rateSum, stall [2]time.Duration) {
	var run [2]time.Duration
	for i := 1; i < len(samples); i++ {
		a, z := samples[i-1], samples[i]
		in := slices.ContainsFunc(windows, func(w ckptWindow) bool { return a.at.Before(w.end) && z.at.After(w.start) })
		k := 0
		sum := &outside
		if in {
			k, sum = 1, &during
		}
		sum.records += z.records - a.records
		sum.elapsed += z.at.Sub(a.at)
		if z.records == a.records {
			run[k] += z.at.Sub(a.at)
			stall[k] = max(stall[k], run[k])
		} else {
			run = [2]time.Duration{}
		}
	}
	return outside, during, stall
}

func roundMs(d time.Duration) string { return d.Round(time.Millisecond).String() }
