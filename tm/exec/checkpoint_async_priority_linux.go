package exec

import (
	"runtime"
	"syscall"
)

// lowerUploadPriority runs the calling goroutine (a subtask's uploader) on an OS thread of
// its own, inc nice steps below the priority it had (the TaskManager's; capped at nice
// 19), so that on a busy TaskManager the kernel gives the subtasks' record processing the
// CPU first and the upload what is left (CFS weights: nice 5 gets about a third of a
// nice-0 thread's share under contention, all of an idle core; nice 10, a tenth, starved
// uploads on a machine loaded by other processes: 80 s checkpoints of 55 MB in the
// 10M-key spill run). The goroutine keeps the thread locked until it returns, when Go
// ends the thread with it, so no other goroutine ever runs at the lowered priority (and
// threads the runtime starts meanwhile come from its template thread, not this one).
// Raising one's own nice value needs no privilege; a failure leaves the upload at normal
// priority. It returns the thread's nice value.
func lowerUploadPriority(inc int) (int, error) {
	runtime.LockOSThread()
	tid := syscall.Gettid()
	// The raw getpriority system call returns 20 - nice (1..40).
	raw, err := syscall.Getpriority(syscall.PRIO_PROCESS, tid)
	if err != nil {
		return 0, err
	}
	nice := min(20-raw+inc, 19)
	return nice, syscall.Setpriority(syscall.PRIO_PROCESS, tid, nice)
}
