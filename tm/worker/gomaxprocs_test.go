package worker

import "testing"

func TestProcsFor(t *testing.T) {
	for _, c := range []struct{ slots, procs, want int }{
		{1, 2, 4},   // 2 CPUs, one slot: two spare Ps
		{0, 2, 4},   // slots unset counts as one
		{4, 2, 4},   // never more than twice the CPUs
		{1, 1, 2},   // one CPU
		{4, 64, 72}, // many CPUs: two per slot
		{2, 8, 12},
	} {
		if got := ProcsFor(c.slots, c.procs); got != c.want {
			t.Errorf("ProcsFor(%d slots, %d procs) = %d, want %d", c.slots, c.procs, got, c.want)
		}
	}
}
