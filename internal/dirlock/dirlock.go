// Package dirlock makes a directory owned by one process at a time, and lets the next
// process clean up the directories whose owner died.
//
// The owner holds a lock file (tide.lock, holding its PID) flock'ed for as long as it uses
// the directory; the kernel drops the lock when the process ends, even by SIGKILL. A
// directory whose lock file nobody holds is therefore stale, and CleanStale removes it.
// Pebble instance directories (state/) and local state stores (tm/localstate/) both live
// under roots shared by every TaskManager on a host, so both are owned this way.
package dirlock

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

const (
	// FileName is the lock file in every owned directory.
	FileName = "tide.lock"
	// UnlockedGrace spares a directory without a lock file this long: one being created
	// right now (its lock appears a moment after the directory).
	UnlockedGrace = time.Minute
)

// InUseError is Lock's error when another owner holds the directory.
type InUseError struct {
	Owner string // the PID its lock file names
}

func (e *InUseError) Error() string { return "in use by another owner (process " + e.Owner + ")" }

// MkdirTemp creates a new directory under parent (os.MkdirTemp's pattern) and locks it
// from the start, so CleanStale never takes it for stale; it returns the directory and
// its lock file (close it to release the directory).
func MkdirTemp(parent, pattern string) (string, *os.File, error) {
	dir, err := os.MkdirTemp(parent, pattern)
	if err != nil {
		return "", nil, err
	}
	lock, err := Lock(dir)
	if err != nil {
		_ = os.RemoveAll(dir)
		return "", nil, err
	}
	return dir, lock, nil
}

// Lock takes dir's lock file without waiting and writes this process's PID into it; the
// directory is owned until the returned file is closed or the process ends. A missing lock
// file is created locked under a temporary name and renamed, so CleanStale never sees it
// unlocked. When another owner holds it, the error is an *InUseError.
func Lock(dir string) (*os.File, error) {
	path := filepath.Join(dir, FileName)
	f, err := os.OpenFile(path, os.O_RDWR, 0)
	if errors.Is(err, os.ErrNotExist) {
		tmp := filepath.Join(dir, "."+FileName)
		if f, err = os.OpenFile(tmp, os.O_CREATE|os.O_RDWR|os.O_TRUNC, 0o600); err != nil {
			return nil, err
		}
		if err := flockNow(f); err != nil {
			_ = f.Close()
			return nil, fmt.Errorf("locking %s: %w", tmp, err)
		}
		if err := writeOwner(f); err != nil {
			_ = f.Close()
			return nil, err
		}
		if err := os.Rename(tmp, path); err != nil {
			_ = f.Close()
			return nil, err
		}
		return f, nil
	}
	if err != nil {
		return nil, err
	}
	if err := flockNow(f); err != nil {
		owner := readOwner(f)
		_ = f.Close()
		if errors.Is(err, syscall.EWOULDBLOCK) {
			return nil, &InUseError{Owner: owner}
		}
		return nil, fmt.Errorf("locking %s: %w", path, err)
	}
	if err := writeOwner(f); err != nil {
		_ = f.Close()
		return nil, err
	}
	return f, nil
}

// Cleaner removes the stale directories named Prefix* under a root.
type Cleaner struct {
	Prefix string // the names of the directories it looks at
	What   string // what they are, for errors and logs ("pebble directory")
	// InUse, if set, says whether a directory without a lock file is still used some other
	// way (a tide from before lock files); without it such a directory is stale once older
	// than UnlockedGrace.
	InUse func(dir string) (bool, error)
}

// CleanStale removes the directories under root that no live owner holds: those whose
// lock file nobody holds, and those without a lock file older than UnlockedGrace (unless
// InUse says otherwise). It returns the directories removed; one it could not check or
// remove is reported in the error and the others are still cleaned. A missing root has
// nothing to clean.
func (c Cleaner) CleanStale(root string, log *slog.Logger) ([]string, error) {
	if log == nil {
		log = slog.Default()
	}
	entries, err := os.ReadDir(root)
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("cleaning stale %ss in %s: %w", c.What, root, err)
	}
	var removed []string
	var errs []error
	for _, e := range entries {
		if !e.IsDir() || !strings.HasPrefix(e.Name(), c.Prefix) {
			continue
		}
		path := filepath.Join(root, e.Name())
		lock, owner, stale, err := c.stale(path)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		if !stale {
			continue
		}
		err = os.RemoveAll(path)
		if lock != nil {
			_ = lock.Close() // held until the directory is gone: nobody takes it meanwhile
		}
		if err != nil {
			errs = append(errs, fmt.Errorf("removing stale %s %s: %w", c.What, path, err))
			continue
		}
		log.Info("removed a stale "+c.What+" (its owner is gone)", "dir", path, "pid", owner)
		removed = append(removed, path)
	}
	return removed, errors.Join(errs...)
}

// stale says whether the directory path is unowned. When it is and has a lock file, lock
// is that file, locked by the caller now; owner is the PID the lock file names.
func (c Cleaner) stale(path string) (lock *os.File, owner string, stale bool, err error) {
	f, err := os.OpenFile(filepath.Join(path, FileName), os.O_RDWR, 0)
	if errors.Is(err, os.ErrNotExist) {
		if c.InUse != nil {
			if used, err := c.InUse(path); err != nil || used {
				return nil, "", false, err
			}
		}
		fi, serr := os.Stat(path)
		if serr != nil {
			return nil, "", false, nil // gone meanwhile
		}
		return nil, "", time.Since(fi.ModTime()) > UnlockedGrace, nil
	}
	if err != nil {
		return nil, "", false, fmt.Errorf("checking %s %s: %w", c.What, path, err)
	}
	owner = readOwner(f)
	err = flockNow(f)
	if errors.Is(err, syscall.EWOULDBLOCK) {
		_ = f.Close()
		return nil, owner, false, nil
	}
	if err != nil {
		_ = f.Close()
		return nil, owner, false, fmt.Errorf("checking the lock of %s %s: %w", c.What, path, err)
	}
	return f, owner, true, nil
}

func flockNow(f *os.File) error {
	return syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB)
}

func writeOwner(f *os.File) error {
	if err := f.Truncate(0); err != nil {
		return err
	}
	_, err := f.WriteAt([]byte(strconv.Itoa(os.Getpid())+"\n"), 0)
	return err
}

func readOwner(f *os.File) string {
	b := make([]byte, 32)
	n, _ := f.ReadAt(b, 0)
	if o := strings.TrimSpace(string(b[:n])); o != "" {
		return o
	}
	return "unknown"
}
