package localstate

import (
	"errors"
	"fmt"
	"log/slog"
	"net/url"
	"os"
	"strconv"

	"github.com/tidestream/tide/internal/dirlock"
)

// A store directory is owned by one Store at a time: Open takes the directory's lock file
// (internal/dirlock: tide.lock, flock'ed, holding the owner's PID) and keeps it until Close
// or the process ends, when the kernel drops it. A second Open of the same directory fails instead of removing
// the owner's staging entries. TaskManagers create their store with OpenNew, a directory
// of their own per process (tide-localstate-<TaskManager id>-<pid>-<random> under a root
// shared by every TaskManager on the host), since TaskManager ids repeat across jobs and
// clusters (every `tide run --target local` names them tm-1, tm-2, ...). OpenNew first
// removes the store directories under the root whose owner is gone (CleanStale): a
// TaskManager killed with SIGKILL leaves its directory behind, unlocked.

// DirPrefix starts the name of every store directory OpenNew creates.
const DirPrefix = "tide-localstate-"

// staleStores cleans the store directories under a root.
var staleStores = dirlock.Cleaner{Prefix: DirPrefix, What: "local state directory"}

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

// CleanStale removes the store directories (DirPrefix*) under root that no live store
// owns: those whose lock file nobody holds (their process is gone or closed them), and
// those without a lock file older than a minute (left by a tide without lock files). It
// returns the directories removed; one it could not check or remove is reported in the
// error and the others are still cleaned.
func CleanStale(root string, log *slog.Logger) ([]string, error) {
	return staleStores.CleanStale(root, log)
}

// lockDir takes dir's lock file without waiting (internal/dirlock).
func lockDir(dir string) (*os.File, error) {
	f, err := dirlock.Lock(dir)
	if inUse := (*dirlock.InUseError)(nil); errors.As(err, &inUse) {
		return nil, fmt.Errorf("the directory is in use by another local state store (process %s; one store per directory)", inUse.Owner)
	}
	return f, err
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
