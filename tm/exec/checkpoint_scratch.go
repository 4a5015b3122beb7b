package exec

import (
	"log/slog"
	"os"

	"github.com/tidestream/tide/internal/dirlock"
)

// A checkpoint stages files in a scratch directory (tide-ckpt-*) under the state
// backend's directory (the temp directory without one): the Pebble checkpoint of an
// incremental checkpoint (hard links to the instance's tables), and the state file kept
// for local recovery. The TaskManager process that made it holds its lock
// (internal/dirlock) until the upload ends and removes it then; a TaskManager killed
// mid-upload leaves it behind, unlocked, and the next TaskManager on the host removes it
// (CleanStaleScratch), as it does with stale Pebble instances. Left alone, these hold
// the links' tables on disk long after their instance was cleaned.
const scratchPrefix = "tide-ckpt-"

var staleScratch = dirlock.Cleaner{Prefix: scratchPrefix, What: "checkpoint scratch directory"}

// newScratchDir creates a locked scratch directory under parent, named after name.
func newScratchDir(parent, name string) (string, *os.File, error) {
	return dirlock.MkdirTemp(parent, scratchPrefix+name)
}

// removeScratchDir removes a scratch directory and drops its lock.
func removeScratchDir(dir string, lock *os.File) {
	_ = os.RemoveAll(dir)
	if lock != nil {
		_ = lock.Close()
	}
}

// CleanStaleScratch removes the checkpoint scratch directories under dir (the temp
// directory if empty) that no live TaskManager holds; it returns those removed.
func CleanStaleScratch(dir string, log *slog.Logger) ([]string, error) {
	if dir == "" {
		dir = os.TempDir()
	}
	return staleScratch.CleanStale(dir, log)
}
