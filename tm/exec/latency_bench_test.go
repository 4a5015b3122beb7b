package exec_test

import (
	"fmt"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/tidestream/tide/core"
	"github.com/tidestream/tide/stream"
	"github.com/tidestream/tide/tm/exec"
	"github.com/tidestream/tide/tm/netplane"
)

// BenchmarkLatency: end-to-end record latency of generator (10,000 records/s, stamped with
// the wall clock at the source) → keyBy → reduce → sink (compared with the clock at the
// sink) at parallelism 2 across two executors on loopback, for execution.buffer-timeout 0,
// 5 ms and 100 ms (the default). Reports p50 and p99 in milliseconds. b.N is ignored: each
// run sends 2 s of records.
func BenchmarkLatency(b *testing.B) {
	for _, timeout := range []time.Duration{0, 5 * time.Millisecond, 100 * time.Millisecond} {
		b.Run(fmt.Sprintf("buffer-timeout=%s", timeout), func(b *testing.B) { benchLatency(b, timeout) })
	}
}

func benchLatency(b *testing.B, timeout time.Duration) {
	const rate, seconds, partitions = 10000, 2, 2
	lat := &latencies{}
	job := stream.NewJob("latency", partitions, 128)
	src := stream.GeneratorSource(job, "gen", stream.Generator[int64]{
		Partitions: partitions, PerPartition: rate / partitions * seconds, Rate: rate / partitions,
		Next: func(_ int, seq int64, _ []byte) (int64, int64, []byte) { return seq, time.Now().UnixNano(), nil },
	}, stream.NoWatermarks[int64]())
	sums := stream.Reduce(stream.KeyBy(src, func(v int64) int64 { return v % 64 }), "sum",
		func(acc, v int64) int64 { return acc + v })
	stream.Sink(sums, "latency", func() stream.Operator { return &latencySink{lat: lat} })
	// The job's setting (what the AM sends), over the data planes' default.
	am := newFakeAMWithPlanes(b, job, 2, netplane.Options{}, func(c *exec.Config) { c.BufferTimeout = &timeout })
	b.ResetTimer()
	am.deploy(2)
	am.waitFor("the job to finish", func() bool { return am.allInState(core.TaskFinished) })
	b.StopTimer()
	p50, p99, n := lat.percentiles()
	if n != rate*seconds {
		b.Fatalf("the sink saw %d records, want %d", n, rate*seconds)
	}
	b.ReportMetric(float64(p50.Microseconds())/1000, "p50-ms")
	b.ReportMetric(float64(p99.Microseconds())/1000, "p99-ms")
	fmt.Printf("latency at %d records/s, execution.buffer-timeout %s: p50 %s, p99 %s over %d records (goal for 0: p50 <= 1ms, p99 <= 5ms)\n",
		rate, timeout, p50.Round(10*time.Microsecond), p99.Round(10*time.Microsecond), n)
}

type latencies struct {
	mu sync.Mutex
	d  []time.Duration
}

func (l *latencies) percentiles() (p50, p99 time.Duration, n int) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if len(l.d) == 0 {
		return 0, 0, 0
	}
	slices.Sort(l.d)
	return l.d[len(l.d)/2], l.d[len(l.d)*99/100], len(l.d)
}

// latencySink records now minus each record's timestamp (the source's wall clock).
type latencySink struct {
	stream.BaseOperator
	lat *latencies
	buf []time.Duration
}

func (s *latencySink) Process(_ any, ts int64, _ stream.Collector) error {
	s.buf = append(s.buf, time.Duration(time.Now().UnixNano()-ts))
	return nil
}

func (s *latencySink) Close() error {
	s.lat.mu.Lock()
	s.lat.d = append(s.lat.d, s.buf...)
	s.lat.mu.Unlock()
	s.buf = nil
	return nil
}
