package localstate

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// reopen closes s and opens its directory again: a TaskManager process that comes back
// to the directory an earlier one wrote.
func reopen(t *testing.T, s *Store) *Store {
	t.Helper()
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	s2, err := Open(s.Dir(), nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = s2.Close() })
	return s2
}

// overwrite replaces the bytes of the file at path (every hard link of it) with garbage
// of the same size: what a file that never reached the disk may read as after a crash.
func overwrite(t *testing.T, path string) {
	t.Helper()
	fi, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	f, err := os.OpenFile(path, os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.Write([]byte(strings.Repeat("\x00", int(fi.Size())))); err != nil {
		t.Fatal(err)
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
}

const (
	sstHandle   = "job/shared/map-0-a-000012.sst"
	state5      = "job/chk-5/map-0.state"
	state7      = "job/chk-7/map-0.state"
	fetchedFile = "job/chk-7/map-1.state"
)

// putTwoCheckpoints commits checkpoint 5 (a table and a state file, linked) and 7 (the
// same table, another state file, and a file written through Create as a warm-up does).
func putTwoCheckpoints(t *testing.T, s *Store) (k5, k7 Key) {
	t.Helper()
	src := t.TempDir()
	sst := writeTemp(t, src, "000012.sst", "table bytes")
	k5 = Key{Job: "job", Vertex: "map", KeyGroupEnd: 127, Checkpoint: 5}
	k7 = Key{Job: "job", Vertex: "map", KeyGroupEnd: 127, Checkpoint: 7}
	if err := s.Put(k5, []File{{Handle: sstHandle, Path: sst}, {Handle: state5, Path: writeTemp(t, src, "s5", "state 5")}}); err != nil {
		t.Fatal(err)
	}
	st, err := s.Stage(k7)
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range []struct{ handle, path string }{{sstHandle, sst}, {state7, writeTemp(t, src, "s7", "state 7")}} {
		if err := st.Link(f.handle, f.path); err != nil {
			t.Fatal(err)
		}
	}
	w, err := st.Create(fetchedFile)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := w.Write([]byte("fetched")); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	if err := st.Commit(); err != nil {
		t.Fatal(err)
	}
	return k5, k7
}

func findBytes(t *testing.T, s *Store, handle string, size int) (string, bool) {
	t.Helper()
	p, ok := s.Find("job", "map", handle, int64(size))
	if !ok {
		return "", false
	}
	b, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	return string(b), true
}

// After a reopen, files whose bytes match the sums the index recorded are served; a file
// of the right name and size with other bytes is not: the entries holding it are
// dropped (their other files are as suspect) and the restore downloads it.
func TestReopenedStoreServesOnlyFilesMatchingTheirChecksum(t *testing.T) {
	s, err := Open(t.TempDir(), nil)
	if err != nil {
		t.Fatal(err)
	}
	putTwoCheckpoints(t, s)
	sstPath, _ := s.Find("job", "map", sstHandle, 11)

	// Intact after a reopen: every file is served, checked against its sum.
	s = reopen(t, s)
	for _, c := range []struct{ handle, want string }{{sstHandle, "table bytes"}, {state5, "state 5"}, {state7, "state 7"}, {fetchedFile, "fetched"}} {
		if got, ok := findBytes(t, s, c.handle, len(c.want)); !ok || got != c.want {
			t.Fatalf("%s after a clean reopen: %q (found %v), want %q", c.handle, got, ok, c.want)
		}
	}

	// The table (linked into both entries) holds garbage of the same size.
	s = reopen(t, s)
	overwrite(t, sstPath)
	if got, ok := findBytes(t, s, state5, 7); !ok || got != "state 5" {
		t.Fatalf("an intact file of checkpoint 5 before the damaged table was asked for: %q (found %v)", got, ok)
	}
	if _, ok := s.Find("job", "map", sstHandle, 11); ok {
		t.Fatal("a table with garbage of the right size is served")
	}
	for _, h := range []string{state5, state7, fetchedFile} {
		if _, ok := s.Find("job", "map", h, 7); ok {
			t.Errorf("%s is still served: its entry held the damaged table", h)
		}
	}
	if left, _ := filepath.Glob(filepath.Join(s.Dir(), "job", "map", "*", "chk-*")); len(left) != 0 {
		t.Fatalf("the damaged entries' directories stay: %v", left)
	}
}

// A file taken into a new entry from an unchecked one keeps the recorded sum, unchecked:
// damaged bytes do not become trusted by being linked again.
func TestLinkingAnUncheckedFileKeepsItsChecksum(t *testing.T) {
	for _, damaged := range []bool{false, true} {
		s, err := Open(t.TempDir(), nil)
		if err != nil {
			t.Fatal(err)
		}
		_, k7 := putTwoCheckpoints(t, s)
		s = reopen(t, s)
		var path string
		for _, f := range s.Lookup("job", "map", 7, 0, 127)[0].Files {
			if f.Handle == state7 {
				path = f.Path
			}
		}
		if damaged {
			overwrite(t, path)
		}
		k9 := k7
		k9.Checkpoint = 9
		if err := s.Put(k9, []File{{Handle: state7, Path: path}}); err != nil {
			t.Fatal(err)
		}
		s.Confirm("job", 9) // only the new entry is left to serve it
		got, ok := findBytes(t, s, state7, 7)
		if damaged && ok {
			t.Fatalf("damaged bytes linked into a new entry are served: %q", got)
		}
		if !damaged && (!ok || got != "state 7") {
			t.Fatalf("intact bytes linked into a new entry: %q (found %v)", got, ok)
		}
	}
}

// An entry whose index records no checksums (written by an older tide) is dropped at Open.
func TestEntryWithoutChecksumsIsDropped(t *testing.T) {
	s, err := Open(t.TempDir(), nil)
	if err != nil {
		t.Fatal(err)
	}
	k5, _ := putTwoCheckpoints(t, s)
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	p := filepath.Join(s.entryDir(k5), indexName)
	data, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	var ix index
	if err := json.Unmarshal(data, &ix); err != nil {
		t.Fatal(err)
	}
	for i := range ix.Files {
		ix.Files[i].Sum = ""
	}
	if data, err = json.Marshal(ix); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, data, 0o600); err != nil {
		t.Fatal(err)
	}
	s2, err := Open(s.Dir(), nil)
	if err != nil {
		t.Fatal(err)
	}
	defer s2.Close()
	if _, ok := s2.Find("job", "map", state5, 7); ok {
		t.Fatal("a file of an entry without checksums is served")
	}
	if got, ok := findBytes(t, s2, state7, 7); !ok || got != "state 7" {
		t.Fatalf("checkpoint 7's entry (with checksums): %q (found %v)", got, ok)
	}
}
