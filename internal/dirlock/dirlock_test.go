package dirlock

import (
	"errors"
	"os"
	"path/filepath"
	"strconv"
	"testing"
	"time"
)

// TestLockOwnsTheDirectory: a second Lock of a held directory fails naming the holder's
// PID; once the holder closes, the directory is stale to a Cleaner and removed; another
// directory of the prefix still held is kept, and so is a directory of another prefix.
func TestLockOwnsTheDirectory(t *testing.T) {
	root := t.TempDir()
	held, freed, other := filepath.Join(root, "x-held"), filepath.Join(root, "x-freed"), filepath.Join(root, "y-other")
	for _, d := range []string{held, freed, other} {
		if err := os.Mkdir(d, 0o700); err != nil {
			t.Fatal(err)
		}
	}
	lock, err := Lock(held)
	if err != nil {
		t.Fatal(err)
	}
	defer lock.Close()
	var inUse *InUseError
	if _, err := Lock(held); !errors.As(err, &inUse) || inUse.Owner != strconv.Itoa(os.Getpid()) {
		t.Fatalf("second Lock: %v, want an InUseError naming pid %d", err, os.Getpid())
	}
	f, err := Lock(freed)
	if err != nil {
		t.Fatal(err)
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
	long := time.Now().Add(-2 * UnlockedGrace)
	if err := os.Chtimes(other, long, long); err != nil {
		t.Fatal(err)
	}
	removed, err := Cleaner{Prefix: "x-", What: "test directory"}.CleanStale(root, nil)
	if err != nil || len(removed) != 1 || removed[0] != freed {
		t.Fatalf("CleanStale removed %v (%v), want [%s]", removed, err, freed)
	}
	for _, d := range []string{held, other} {
		if _, err := os.Stat(d); err != nil {
			t.Fatalf("%s: %v", d, err)
		}
	}
	if removed, err := (Cleaner{Prefix: "x-"}).CleanStale(filepath.Join(root, "missing"), nil); err != nil || removed != nil {
		t.Fatalf("missing root: %v %v", removed, err)
	}
}
