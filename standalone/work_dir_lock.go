package standalone

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
)

// workDirLockName is the file in a local cluster's work directory that the cluster holds
// an exclusive lock on while it runs; it holds the pid of the process holding the lock.
const workDirLockName = ".lock"

// ErrWorkDirInUse: another local cluster runs in the work directory StartLocal was given.
var ErrWorkDirInUse = errors.New("work directory in use by another local cluster")

// lockWorkDir takes the work directory for one local cluster: two sharing one would mix
// their logs, and each would rotate the other's live logs away (rotateLogs). The lock is
// the kernel's (flock), so a holder that died without unlocking holds nothing.
func lockWorkDir(dir string) (*os.File, error) {
	path := filepath.Join(dir, workDirLockName)
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o644)
	if err != nil {
		return nil, fmt.Errorf("local cluster: lock the work directory: %w", err)
	}
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB); err != nil {
		holder, _ := os.ReadFile(path)
		f.Close()
		if errors.Is(err, syscall.EWOULDBLOCK) {
			return nil, fmt.Errorf("local cluster: %w: %s (process %s); give each run its own --work-dir",
				ErrWorkDirInUse, dir, strings.TrimSpace(string(holder)))
		}
		return nil, fmt.Errorf("local cluster: lock the work directory %s: %w", dir, err)
	}
	err = f.Truncate(0)
	if err == nil {
		_, err = f.WriteAt([]byte(strconv.Itoa(os.Getpid())+"\n"), 0)
	}
	if err != nil {
		f.Close()
		return nil, fmt.Errorf("local cluster: write the pid to %s: %w", path, err)
	}
	return f, nil
}
