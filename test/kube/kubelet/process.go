package kubelet

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"syscall"
	"time"
)

// process is one run of a container: a local process leading its own process group.
type process struct {
	cmd     *exec.Cmd
	started time.Time
	// done closes once the process was waited for; code and signaled are set by then.
	done     chan struct{}
	code     int32
	finished time.Time
}

// startProcess starts argv in dir with env, stdout and stderr appended to logPath, in a new
// process group; onExit runs (on its own goroutine) once the process is gone.
func startProcess(argv, env []string, dir, logPath string, onExit func(*process)) (*process, error) {
	if len(argv) == 0 || argv[0] == "" {
		return nil, errors.New("no command: the test kubelet runs no images, a container needs command (or args)")
	}
	logf, err := os.OpenFile(logPath, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		return nil, err
	}
	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.Env, cmd.Dir = env, dir
	cmd.Stdout, cmd.Stderr = logf, logf
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := cmd.Start(); err != nil {
		logf.Close()
		return nil, fmt.Errorf("starting %q: %w", argv, err)
	}
	p := &process{cmd: cmd, started: time.Now(), done: make(chan struct{})}
	go func() {
		_ = cmd.Wait()
		logf.Close()
		p.code = int32(cmd.ProcessState.ExitCode())
		if ws, ok := cmd.ProcessState.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
			p.code = 128 + int32(ws.Signal())
		}
		p.finished = time.Now()
		// The container is gone when its first process is: nothing it started survives it.
		_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
		close(p.done)
		onExit(p)
	}()
	return p, nil
}

func (p *process) pid() int { return p.cmd.Process.Pid }

// stop sends SIGTERM to the process group, SIGKILL after grace, and waits until it is gone.
func (p *process) stop(grace time.Duration) {
	select {
	case <-p.done:
		return
	default:
	}
	_ = syscall.Kill(-p.pid(), syscall.SIGTERM)
	t := time.NewTimer(grace)
	defer t.Stop()
	select {
	case <-p.done:
		return
	case <-t.C:
	}
	_ = syscall.Kill(-p.pid(), syscall.SIGKILL)
	<-p.done
}
