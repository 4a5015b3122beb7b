package allocator

// Workspace keeps the memory of one decision for the next. A scheduler that decides again
// and again (every restart and rescale) passes the same Workspace in Options, and a
// decision then allocates little beyond the plan's Parallelism: over tens of thousands of
// slots that is most of its cost.
//
// The Assignments of a plan decided with a Workspace live in it: they stay valid until
// the next decision with the same Workspace. The zero value is ready to use; a Workspace
// is not safe for concurrent use.
type Workspace struct {
	assignments []Assignment
	chosen      []slotPos
	keys        []tmKey
	index       tmIndex
	counters    []int32
	previous    []int32 // per execution group, canonical TaskManager it ran on (-1: none)
	positions   []int32
	used        []bool
	rest        []pending
}

// pending is an execution group not yet placed: subtask index of group gs[group].
type pending struct{ group, index int32 }

// resize returns buf with length n and every element zero, reusing its memory when large
// enough.
func resize[T any](buf []T, n int) []T {
	if cap(buf) < n {
		return make([]T, n)
	}
	buf = buf[:n]
	clear(buf)
	return buf
}
