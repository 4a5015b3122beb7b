package standalone

import (
	"os/exec"
	"syscall"
)

// dieWithParent has the kernel send the child SIGTERM when the process that started it
// dies, however it dies: a tide run killed with SIGKILL, or by SIGPIPE when its output
// went to a pipe that closed (tide run | head), stops its cluster instead of leaving the
// AM and TaskManagers running on their own. The kernel sends it when the thread that
// started the child ends, not only the process: Go ends a thread only when a goroutine
// that locked it (runtime.LockOSThread) returns still locked, and nothing in a process that
// starts local clusters (tide run, the end-to-end tests) does; the TaskManager's uploader,
// which does, runs in the children.
func dieWithParent(cmd *exec.Cmd) {
	if cmd.SysProcAttr == nil {
		cmd.SysProcAttr = &syscall.SysProcAttr{}
	}
	cmd.SysProcAttr.Pdeathsig = syscall.SIGTERM
}
