package localstate

import (
	"errors"
	"fmt"
	"log/slog"
	"net/url"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// A store directory is owned by one Store at a time: Open flock's the directory's lock
// file (tide.lock, holding the owner's PID) and keeps it until Close or the process ends,
// when the kernel drops it. A second Open of the same directory fails instead of removing
// the owner's staging entries. TaskManagers create their store with OpenNew, a directory
// of their own per process (tide-localstate-<TaskManager id>-<pid>-<random> under a root
// shared by every TaskManager on the host), since TaskManager ids repeat across jobs and
// clusters (every `tide run --target local` names them tm-1, tm-2, ...). OpenNew first
// removes the store directories under the root whose owner is gone (CleanStale): a
// TaskManager killed with SIGKILL leaves its directory behind, unlocked.

const (
	// DirPrefix starts the name of every store directory OpenNew creates.
	DirPrefix = "tide-localstate-"
	lockName  = "tide.lock"
	// unlockedGrace spares a store directory without a lock file this long: one being
	// created right now (the lock appears a moment after the directory).
	unlockedGrace = time.Minute
)

// OpenNew removes the stale store directories under root (CleanStale) and opens a new,
// empty store in a directory of its own there, named after name (a TaskManager id), this
// process's PID and a random suffix. Empty root: the temp directory.
func OpenNew(root, name string, log *slog.Logger) (*Store, error) {
	if log == nil {
		log = slog.Default()
	}
	if root == "" {
		root = os.TempDir()
	}
	if err := os.MkdirAll(root, 0o700); err != nil {
		return nil, fmt.Errorf("local state root %s: %w", root, err)
	}
	if _, err := CleanStale(root, log); err != nil {
		log.Warn("local state: some stale store directories stay", "root", root, "err", err)
	}
	dir, err := os.MkdirTemp(root, DirPrefix+url.PathEscape(name)+"-"+strconv.Itoa(os.Getpid())+"-")
	if err != nil {
		return nil, fmt.Errorf("local state root %s: %w", root, err)
	}
	s, err := Open(dir, log)
	if err != nil {
		_ = os.RemoveAll(dir)
		return nil, err
	}
	return s, nil
}

// lockDir takes dir's lock file without waiting. A new lock file is locked under a
// temporary name and renamed, so CleanStale never sees it unlocked.
func lockDir(dir string) (*os.File, error) {
	path := filepath.Join(dir, lockName)
	f, err := os.OpenFile(path, os.O_RDWR, 0)
	if errors.Is(err, os.ErrNotExist) {
		tmp := filepath.Join(dir, "."+lockName)
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
			return nil, fmt.Errorf("the directory is in use by another local state store (process %s; one store per directory)", owner)
		}
		return nil, fmt.Errorf("locking %s: %w", path, err)
	}
	if err := writeOwner(f); err != nil {
		_ = f.Close()
		return nil, err
	}
	return f, nil
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

// CleanStale removes the store directories (DirPrefix*) under root that no live store
// owns: those whose lock file nobody holds (their process is gone or closed them), and
// those without a lock file older than a minute (left by a tide without lock files). It
// returns the directories removed; one it could not check or remove is reported in the
// error and the others are still cleaned.
func CleanStale(root string, log *slog.Logger) ([]string, error) {
	if log == nil {
		log = slog.Default()
	}
	entries, err := os.ReadDir(root)
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("cleaning stale local state directories in %s: %w", root, err)
	}
	var removed []string
	var errs []error
	for _, e := range entries {
		if !e.IsDir() || !strings.HasPrefix(e.Name(), DirPrefix) {
			continue
		}
		path := filepath.Join(root, e.Name())
		lock, owner, stale, err := staleDir(path)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		if !stale {
			continue
		}
		err = os.RemoveAll(path)
		if lock != nil {
			_ = lock.Close() // held until the directory is gone: nobody opens it meanwhile
		}
		if err != nil {
			errs = append(errs, fmt.Errorf("removing stale local state directory %s: %w", path, err))
			continue
		}
		log.Info("removed a stale local state directory (its TaskManager is gone)", "dir", path, "pid", owner)
		removed = append(removed, path)
	}
	return removed, errors.Join(errs...)
}

// staleDir says whether the store directory path is unowned. When it is and has a lock
// file, lock is that file, locked by the caller now.
func staleDir(path string) (lock *os.File, owner string, stale bool, err error) {
	f, err := os.OpenFile(filepath.Join(path, lockName), os.O_RDWR, 0)
	if errors.Is(err, os.ErrNotExist) {
		fi, serr := os.Stat(path)
		if serr != nil {
			return nil, "", false, nil // gone meanwhile
		}
		return nil, "", time.Since(fi.ModTime()) > unlockedGrace, nil
	}
	if err != nil {
		return nil, "", false, fmt.Errorf("checking local state directory %s: %w", path, err)
	}
	owner = readOwner(f)
	err = flockNow(f)
	if errors.Is(err, syscall.EWOULDBLOCK) {
		_ = f.Close()
		return nil, owner, false, nil
	}
	if err != nil {
		_ = f.Close()
		return nil, owner, false, fmt.Errorf("checking the lock of local state directory %s: %w", path, err)
	}
	return f, owner, true, nil
}

// Close releases the store's directory (its files stay; CleanStale removes them once no
// store owns the directory). The store must not be used afterwards.
func (s *Store) Close() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.lock == nil {
		return nil
	}
	err := s.lock.Close()
	s.lock = nil
	return err
}

// Delete closes the store and removes its directory with everything in it.
func (s *Store) Delete() error {
	if err := s.Close(); err != nil {
		return err
	}
	return os.RemoveAll(s.root)
}
