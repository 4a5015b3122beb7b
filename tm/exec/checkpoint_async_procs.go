package exec

import (
	"runtime"
	"sync"
)

// A low-priority upload gets a P of its own. The Go scheduler runs goroutines on Ps
// (GOMAXPROCS of them) and knows nothing of thread priorities: an uploader whose niced
// thread the kernel leaves waiting behind busier threads still holds its P all that time,
// and the subtasks' goroutines share the Ps left. On a loaded machine that is most of an
// upload (1 GiB of heap state at load 25, GOMAXPROCS 2: the upload took 70-100 s and the
// job processed 0.31 of its records/s meanwhile). So while a low-priority upload runs,
// GOMAXPROCS is one higher: the kernel, not the Go scheduler, then decides how much CPU
// the upload gets, by its nice value, as intended.

// uploadProcs counts the Ps added for running uploads (across the process's executors).
var uploadProcs struct {
	mu    sync.Mutex
	added int
}

// reserveUploadProc raises GOMAXPROCS by one for a low-priority upload about to run and
// returns the function that lowers it again when the upload ends.
func reserveUploadProc() (release func()) {
	uploadProcs.mu.Lock()
	defer uploadProcs.mu.Unlock()
	uploadProcs.added++
	runtime.GOMAXPROCS(runtime.GOMAXPROCS(0) + 1)
	var once sync.Once
	return func() {
		once.Do(func() {
			uploadProcs.mu.Lock()
			defer uploadProcs.mu.Unlock()
			uploadProcs.added--
			runtime.GOMAXPROCS(max(runtime.GOMAXPROCS(0)-1, 1))
		})
	}
}
