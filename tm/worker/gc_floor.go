package worker

import (
	"log/slog"
	"os"
	"runtime"
	"runtime/debug"
	"runtime/metrics"
	"sync/atomic"
)

// goHeapMinimum is Go's smallest heap goal at GOGC 100; it scales with the GC percent.
const goHeapMinimum = 4 << 20

// GCFloor is the heap floor the TaskManager keeps (StartGCFloor): 64 MiB, or an eighth of
// ProcessSize when that is smaller.
func (m MemoryConfig) GCFloor() uint64 {
	floor := uint64(64 << 20)
	if m.ProcessSize > 0 {
		floor = min(floor, uint64(m.ProcessSize/8))
	}
	return floor
}

// gcPercentFor is the GC percent that puts the next heap goal, live×(1+percent/100), at
// floor when the live heap is smaller than half of it, else Go's default 100. Go's goal is
// also never below its 4 MiB minimum times percent/100, so the percent stays at or under
// floor/4 MiB×100 (with 0 live bytes, none measured yet, that is the first goal).
func gcPercentFor(live, floor uint64) int {
	if live >= floor/2 {
		return 100
	}
	most := floor * 100 / goHeapMinimum
	if live == 0 {
		return int(max(most, 100))
	}
	return int(max(min(floor*100/live-100, most), 100))
}

// StartGCFloor keeps the Go heap goal of this process at or above floor bytes: while the
// live heap is small, a collection every few megabytes of records costs a TaskManager's two
// cores more than the memory it saves. After every collection it sets the GC percent from
// the live heap (gcPercentFor), so once the live heap passes half the floor Go collects as
// usual (GOGC 100); the soft memory limit (taskmanager.memory.process.size) still caps the
// heap. It does nothing when GOGC is set (the user's choice stands) or floor is 0. Call it
// once per process; stop ends it and restores GOGC 100.
func StartGCFloor(floor uint64, log *slog.Logger) (stop func()) {
	if floor == 0 || os.Getenv("GOGC") != "" {
		return func() {}
	}
	g := &gcFloor{floor: floor, sample: []metrics.Sample{{Name: "/gc/heap/live:bytes"}}}
	g.tune()
	g.arm()
	log.Info("Go heap floor set: the GC leaves a small heap alone until it reaches the floor", "floor_bytes", floor)
	return func() {
		g.stopped.Store(true)
		debug.SetGCPercent(100)
	}
}

type gcFloor struct {
	floor   uint64
	sample  []metrics.Sample
	percent int // last set (0: none yet; gcPercentFor is at least 100); the finalizer goroutine's after start
	stopped atomic.Bool
}

// sentinel is the object whose collection tells gcFloor that a GC cycle ran (it holds a
// pointer, so it is never combined with other objects by the tiny allocator).
type sentinel struct {
	_ *int
	_ [2]uint64
}

func (g *gcFloor) arm() {
	runtime.SetFinalizer(&sentinel{}, func(*sentinel) {
		if g.stopped.Load() {
			return
		}
		g.tune()
		g.arm()
	})
}

func (g *gcFloor) tune() {
	metrics.Read(g.sample)
	var live uint64
	if g.sample[0].Value.Kind() == metrics.KindUint64 {
		live = g.sample[0].Value.Uint64()
	}
	if p := gcPercentFor(live, g.floor); p != g.percent {
		debug.SetGCPercent(p)
		g.percent = p
	}
}
