package exec

import (
	"os"
	"path/filepath"
	"slices"
	"testing"
)

// A scratch directory whose TaskManager holds its lock survives the cleaning of the next
// TaskManager on the host; one whose lock nobody holds (its TaskManager was killed
// mid-upload) is removed, and so is nothing else under the root.
func TestCleanStaleScratch(t *testing.T) {
	root := t.TempDir()
	live, liveLock, err := newScratchDir(root, "count-0-1-7-")
	if err != nil {
		t.Fatal(err)
	}
	dead, deadLock, err := newScratchDir(root, "count-1-1-7-")
	if err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(filepath.Join(dead, "db"), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dead, "db", "000001.sst"), []byte("table"), 0o600); err != nil {
		t.Fatal(err)
	}
	_ = deadLock.Close() // as when its process dies
	other := filepath.Join(root, "tide-pebble-count-0-x")
	if err := os.Mkdir(other, 0o700); err != nil {
		t.Fatal(err)
	}

	removed, err := CleanStaleScratch(root, nil)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(removed, []string{dead}) {
		t.Fatalf("removed %v, want only %s", removed, dead)
	}
	for _, d := range []string{live, other} {
		if _, err := os.Stat(d); err != nil {
			t.Errorf("%s: %v (it must stay)", d, err)
		}
	}
	removeScratchDir(live, liveLock)
	if _, err := os.Stat(live); !os.IsNotExist(err) {
		t.Errorf("%s after removeScratchDir: %v", live, err)
	}
}
