package exec

import (
	"runtime"
	"syscall"
)

// lowerUploadPriority runs the calling goroutine (a subtask's uploader) on an OS thread of
// its own at nice uploadNice, so that on a busy TaskManager the kernel gives the subtasks'
// record processing the CPU first and the upload what is left (CFS weights: nice 5 gets
// about a third of a nice-0 thread's share under contention, all of an idle core; nice 10,
// a tenth, starved uploads on a machine loaded by other processes: 80 s checkpoints of
// 55 MB in the 10M-key spill run). The
// goroutine keeps the thread locked until it returns, when Go ends the thread with it, so
// no other goroutine ever runs at the lowered priority. Raising one's own nice value needs
// no privilege; a failure leaves the upload at normal priority.
func lowerUploadPriority() error {
	runtime.LockOSThread()
	return syscall.Setpriority(syscall.PRIO_PROCESS, syscall.Gettid(), uploadNice)
}
