package standalone

import (
	"os"
	"path/filepath"
	"testing"
)

// TestRotateLogs: every *.log moves to .1 and the earlier ones up by one; the one past keep
// is dropped, and files that are not logs stay.
func TestRotateLogs(t *testing.T) {
	dir := t.TempDir()
	files := map[string]string{
		"jobmanager.log": "run 4", "jobmanager.log.1": "run 3", "jobmanager.log.2": "run 2", "jobmanager.log.3": "run 1",
		"taskmanager-3.log": "stale", "notes.txt": "kept",
	}
	for name, body := range files {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if err := rotateLogs(dir, 3); err != nil {
		t.Fatal(err)
	}
	want := map[string]string{
		"jobmanager.log.1": "run 4", "jobmanager.log.2": "run 3", "jobmanager.log.3": "run 2",
		"taskmanager-3.log.1": "stale", "notes.txt": "kept",
	}
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, e := range entries {
		names = append(names, e.Name())
		b, err := os.ReadFile(filepath.Join(dir, e.Name()))
		if err != nil {
			t.Fatal(err)
		}
		if want[e.Name()] != string(b) {
			t.Errorf("%s holds %q, want %q", e.Name(), b, want[e.Name()])
		}
	}
	if len(names) != len(want) {
		t.Errorf("the directory holds %v, want the names of %v", names, want)
	}
	if err := rotateLogs(filepath.Join(dir, "missing"), 3); err != nil {
		t.Errorf("rotating an empty directory: %v", err)
	}
}
