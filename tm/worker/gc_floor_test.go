package worker

import (
	"log/slog"
	"os"
	"runtime"
	"runtime/debug"
	"testing"
)

func TestGCPercentFor(t *testing.T) {
	const mib = 1 << 20
	tests := []struct {
		live, floor uint64
		want        int
	}{
		{0, 64 * mib, 1600},       // nothing measured yet: Go's 4 MiB minimum × 16
		{1 * mib, 64 * mib, 1600}, // not 6300%: the 4 MiB minimum × 63 would pass the floor
		{1 * mib, 32 * mib, 800},
		{1 * mib, 2 * mib, 100},    // a floor under Go's minimum changes nothing
		{8 * mib, 64 * mib, 700},   // 8 MiB × 8 = 64 MiB
		{16 * mib, 64 * mib, 300},  // 16 MiB × 4
		{32 * mib, 64 * mib, 100},  // half the floor: Go's default
		{512 * mib, 64 * mib, 100}, // a large heap is collected as usual
		{30 * mib, 64 * mib, 113},  // rounds down: the goal stays at or under the floor
	}
	for _, tt := range tests {
		if got := gcPercentFor(tt.live, tt.floor); got != tt.want {
			t.Errorf("gcPercentFor(%d MiB, %d MiB) = %d, want %d", tt.live/mib, tt.floor/mib, got, tt.want)
		}
	}
	if got := (MemoryConfig{ProcessSize: 1728 << 20}).GCFloor(); got != 64<<20 {
		t.Errorf("GCFloor(1728 MiB) = %d, want 64 MiB", got)
	}
	if got := (MemoryConfig{ProcessSize: 256 << 20}).GCFloor(); got != 32<<20 {
		t.Errorf("GCFloor(256 MiB) = %d, want 32 MiB", got)
	}
}

// TestGCFloorCollectsLessOften: with a small live heap, allocating 48 MiB of garbage takes
// several collections at GOGC 100 and at most a couple with a 64 MiB floor; stopping the
// floor restores GOGC 100.
func TestGCFloorCollectsLessOften(t *testing.T) {
	if os.Getenv("GOGC") != "" {
		t.Skip("GOGC is set: the floor stays off")
	}
	gcs := func() uint32 {
		var ms runtime.MemStats
		runtime.ReadMemStats(&ms)
		return ms.NumGC
	}
	var sink []byte
	churn := func() uint32 {
		runtime.GC()
		before := gcs()
		for range 48 << 10 {
			sink = make([]byte, 1<<10)
		}
		return gcs() - before
	}
	_ = sink
	plain := churn()
	stop := StartGCFloor(64<<20, slog.New(slog.DiscardHandler))
	floored := churn()
	stop()
	if old := debug.SetGCPercent(100); old != 100 {
		t.Errorf("after stop the GC percent is %d, want 100", old)
	}
	t.Logf("48 MiB of garbage: %d collections at GOGC 100, %d with a 64 MiB floor", plain, floored)
	if plain < 4 || floored > 2 {
		t.Fatalf("%d collections at GOGC 100 (want at least 4), %d with the floor (want at most 2)", plain, floored)
	}
}
