package core

// deploymentMemory is what a released attempt leaves for the next deploy: its per-subtask
// and per-slot bookkeeping, which never leaves the scheduler, and the placement memory of
// the attempt before it (the released attempt's own placement stays in use as locality
// for the next plan). Tens of thousands of subtasks then cost no fresh memory there.
type deploymentMemory struct {
	tasks     []taskPhase
	taskSlot  []int32
	slotLive  []int32
	placement []string
}

// sized returns buf with length n and every element zero, reusing its memory when large
// enough.
func sized[T any](buf []T, n int) []T {
	if cap(buf) < n {
		return make([]T, n)
	}
	buf = buf[:n]
	clear(buf)
	return buf
}
