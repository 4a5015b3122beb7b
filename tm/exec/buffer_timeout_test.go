package exec_test

import (
	"context"
	"sync/atomic"
	"testing"
	"time"

	"github.com/tidestream/tide/stream"
	"github.com/tidestream/tide/tm/exec"
	"github.com/tidestream/tide/tm/netplane"
)

// TestBufferTimeoutReloadedWhileRunning: a slow source (20 records/s, no watermarks, no
// checkpoints) → rebalance across two executors → a counting sink, with the job's
// execution.buffer-timeout -1 (only full buffers) although the data planes' own setting is
// 0: the job's value wins and no record reaches the sink (a 32 KiB buffer fills in minutes).
// SetBufferTimeout(0) on the running executors lets every record written so far through, and
// later ones on their own. An attempt deployed after a reload back to -1 opens its channels
// with -1 (not the planes' 0) and holds its records again until the next reload to 0.
func TestBufferTimeoutReloadedWhileRunning(t *testing.T) {
	// received counts the records of the current attempt only.
	var generated, received, attempt atomic.Int64
	job := stream.NewJob("reload", 2, 128)
	src := stream.GeneratorSource(job, "gen", stream.Generator[int64]{
		Partitions: 2, Rate: 10,
		Next: func(_ int, seq int64, _ []byte) (int64, int64, []byte) {
			generated.Add(1)
			return seq, stream.NoTimestamp, nil
		},
	}, stream.NoWatermarks[int64]())
	stream.Sink(stream.Rebalance(src, "spread"), "count",
		func() stream.Operator { return &countingSink{n: &received, attempt: &attempt} })
	onlyFull := -time.Millisecond
	am := newFakeAMWithPlanes(t, job, 2, netplane.Options{FlushEveryRecord: true}, func(c *exec.Config) { c.BufferTimeout = &onlyFull })
	for _, tm := range am.tms {
		if got := tm.exec.BufferTimeout(); got != onlyFull {
			t.Fatalf("executor %s: BufferTimeout %v, want the job's %v over the plane's 0", tm.id, got, onlyFull)
		}
	}
	// holds deploys an attempt and checks that none of its records reaches the sink while
	// the buffers cannot have filled; release reloads 0 and waits for the held records and
	// then for later ones, sent on their own.
	holds := func(what string) {
		t.Helper()
		am.mu.Lock()
		attempt.Store(am.attempt + 1)
		am.mu.Unlock()
		received.Store(0)
		am.deploy(2)
		generated.Store(0) // the attempt's sources may have begun; generated only undercounts
		eventually(t, "records generated", func() bool { return generated.Load() >= 6 })
		if n := received.Load(); n != 0 {
			t.Fatalf("%s: with execution.buffer-timeout -1 the sink received %d records before any buffer filled, want 0", what, n)
		}
	}
	release := func() {
		t.Helper()
		for _, tm := range am.tms {
			tm.exec.SetBufferTimeout(0)
		}
		seen := generated.Load() - 2 // a record of each source may be on its way into the router
		eventually(t, "the held records after the reload to 0", func() bool { return received.Load() >= seen })
		seen = generated.Load() + 4
		eventually(t, "later records on their own", func() bool { return received.Load() >= seen })
	}
	holds("the first attempt")
	release()
	for _, tm := range am.tms {
		tm.exec.SetBufferTimeout(onlyFull)
	}
	holds("an attempt deployed after the reload to -1")
	release()
}

// countingSink counts the records it receives in attempt (and ignores those of others).
type countingSink struct {
	stream.BaseOperator
	n, attempt *atomic.Int64
	current    bool
}

func (s *countingSink) Open(_ context.Context, rt stream.Runtime, _ stream.StateReader) error {
	s.current = rt.Attempt == s.attempt.Load()
	return nil
}

func (s *countingSink) Process(any, int64, stream.Collector) error {
	if s.current {
		s.n.Add(1)
	}
	return nil
}
