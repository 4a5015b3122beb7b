package state

import (
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// Every Pebble instance directory (tide-pebble-*) holds a lock file, flock'ed by the
// process that uses the instance for as long as it is open. A TaskManager killed with
// SIGKILL leaves its directories behind, but the kernel drops its locks; CleanStale
// removes exactly those, never a directory whose lock another process (or another
// TaskManager in this process) holds.

const (
	instancePrefix = "tide-pebble-"
	lockName       = "tide.lock"
	// unlockedGrace spares a directory without a lock file this long: it may be an
	// instance being created right now (the lock appears a moment after the directory).
	unlockedGrace = time.Minute
)

// newInstanceDir creates a fresh instance directory under parent, locked from the start
// (a restore may fill it for a while before Pebble opens it).
func newInstanceDir(parent, name string) (string, *os.File, error) {
	dir, err := os.MkdirTemp(parent, instancePrefix+name+"-")
	if err != nil {
		return "", nil, err
	}
	lock, err := lockInstance(dir)
	if err != nil {
		_ = os.RemoveAll(dir)
		return "", nil, err
	}
	return dir, lock, nil
}

// lockInstance creates dir's lock file, already locked (it is locked under a temporary
// name and renamed, so CleanStale never sees it unlocked), with the PID in it.
func lockInstance(dir string) (*os.File, error) {
	tmp := filepath.Join(dir, "."+lockName)
	f, err := os.OpenFile(tmp, os.O_CREATE|os.O_RDWR|os.O_TRUNC, 0o600)
	if err != nil {
		return nil, err
	}
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB); err != nil {
		_ = f.Close()
		return nil, fmt.Errorf("locking %s: %w", tmp, err)
	}
	if _, err := f.WriteString(strconv.Itoa(os.Getpid()) + "\n"); err != nil {
		_ = f.Close()
		return nil, err
	}
	if err := os.Rename(tmp, filepath.Join(dir, lockName)); err != nil {
		_ = f.Close()
		return nil, err
	}
	return f, nil
}

// CleanStale removes the Pebble instance directories under dir that no live process
// uses: those whose lock file nobody holds (their TaskManager died), and those without a
// lock file older than a minute. It returns the directories removed; a directory it could
// not remove is reported in the error and the others are still cleaned.
func CleanStale(dir string, log *slog.Logger) ([]string, error) {
	if dir == "" {
		dir = os.TempDir()
	}
	if log == nil {
		log = slog.Default()
	}
	entries, err := os.ReadDir(dir)
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("cleaning stale pebble directories in %s: %w", dir, err)
	}
	var removed []string
	var errs []error
	for _, e := range entries {
		if !e.IsDir() || !strings.HasPrefix(e.Name(), instancePrefix) {
			continue
		}
		path := filepath.Join(dir, e.Name())
		stale, owner, err := staleInstance(path)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		if !stale {
			continue
		}
		if err := os.RemoveAll(path); err != nil {
			errs = append(errs, fmt.Errorf("removing stale pebble directory %s: %w", path, err))
			continue
		}
		log.Info("removed a stale pebble directory (its TaskManager is gone)", "dir", path, "pid", owner)
		removed = append(removed, path)
	}
	return removed, errors.Join(errs...)
}

// staleInstance says whether the instance directory path is unused; owner is the PID its
// lock file names (empty without one).
func staleInstance(path string) (stale bool, owner string, err error) {
	f, err := os.OpenFile(filepath.Join(path, lockName), os.O_RDWR, 0)
	if errors.Is(err, os.ErrNotExist) {
		// No lock file: an instance being created, or one of a tide without lock files,
		// whose Pebble still holds its own LOCK (a POSIX lock) while open.
		if held, err := pebbleLockHeld(path); err != nil || held {
			return false, "", err
		}
		fi, serr := os.Stat(path)
		if serr != nil {
			return false, "", nil // gone meanwhile
		}
		return time.Since(fi.ModTime()) > unlockedGrace, "", nil
	}
	if err != nil {
		return false, "", fmt.Errorf("checking pebble directory %s: %w", path, err)
	}
	defer f.Close()
	b := make([]byte, 32)
	n, _ := f.Read(b)
	owner = strings.TrimSpace(string(b[:n]))
	err = syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB)
	if errors.Is(err, syscall.EWOULDBLOCK) {
		return false, owner, nil
	}
	if err != nil {
		return false, owner, fmt.Errorf("checking the lock of pebble directory %s: %w", path, err)
	}
	// Locked by us now: nobody else will start using it (an instance directory is never
	// reopened), and closing f releases the lock after the removal.
	return true, owner, nil
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
