package state

import (
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"syscall"

	"github.com/tidestream/tide/internal/dirlock"
)

// Every Pebble instance directory (tide-pebble-*) is owned through internal/dirlock by the
// process that uses the instance, for as long as it is open. A TaskManager killed with
// SIGKILL leaves its directories behind, but the kernel drops its locks; CleanStale
// removes exactly those, never a directory whose lock another process (or another
// TaskManager in this process) holds.

const instancePrefix = "tide-pebble-"

// staleInstances cleans the instance directories under a TaskManager's pebble root. A
// directory without a lock file is still in use while a Pebble (of a tide from before lock
// files) holds its own LOCK.
var staleInstances = dirlock.Cleaner{Prefix: instancePrefix, What: "pebble directory", InUse: pebbleLockHeld}

// newInstanceDir creates a fresh instance directory under parent, locked from the start
// (a restore may fill it for a while before Pebble opens it).
func newInstanceDir(parent, name string) (string, *os.File, error) {
	return dirlock.MkdirTemp(parent, instancePrefix+name+"-")
}

// CleanStale removes the Pebble instance directories under dir (the temp directory if
// empty) that no live process uses: those whose lock file nobody holds (their TaskManager
// died), and those without a lock file older than a minute. It returns the directories
// removed; a directory it could not remove is reported in the error and the others are
// still cleaned.
func CleanStale(dir string, log *slog.Logger) ([]string, error) {
	if dir == "" {
		dir = os.TempDir()
	}
	return staleInstances.CleanStale(dir, log)
}

// pebbleLockHeld says whether another process holds Pebble's LOCK file in dir (F_GETLK:
// it tests without taking the lock; this process holds no such lock, as every instance it
// opens has a lock file of its own).
func pebbleLockHeld(dir string) (bool, error) {
	f, err := os.Open(filepath.Join(dir, "LOCK"))
	if errors.Is(err, os.ErrNotExist) {
		return false, nil
	}
	if err != nil {
		return false, fmt.Errorf("checking pebble directory %s: %w", dir, err)
	}
	defer f.Close()
	lk := syscall.Flock_t{Type: syscall.F_WRLCK, Whence: 0, Start: 0, Len: 0}
	if err := syscall.FcntlFlock(f.Fd(), syscall.F_GETLK, &lk); err != nil {
		return false, fmt.Errorf("checking the pebble LOCK in %s: %w", dir, err)
	}
	return lk.Type != syscall.F_UNLCK, nil
}
