package localstate

import (
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func writeTemp(t *testing.T, dir, name, body string) string {
	t.Helper()
	p := filepath.Join(dir, name)
	if err := os.WriteFile(p, []byte(body), 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}

func TestPutFindConfirmAndReopen(t *testing.T) {
	root := t.TempDir()
	src := t.TempDir()
	s, err := Open(root, nil)
	if err != nil {
		t.Fatal(err)
	}
	k5 := Key{Job: "job/1", Vertex: "map", KeyGroupStart: 0, KeyGroupEnd: 63, Checkpoint: 5}
	sst := writeTemp(t, src, "000012.sst", "sst-bytes")
	state := writeTemp(t, src, "map-0.state", "state-5")
	if err := s.Put(k5, []File{{Handle: "job/1/shared/map-0-a-000012.sst", Path: sst}, {Handle: "job/1/chk-5/map-0.state", Path: state}}); err != nil {
		t.Fatal(err)
	}
	// A streamed entry for checkpoint 7 (what a warm-up does).
	k7 := Key{Job: "job/1", Vertex: "map", KeyGroupStart: 64, KeyGroupEnd: 127, Checkpoint: 7}
	st, err := s.Stage(k7)
	if err != nil {
		t.Fatal(err)
	}
	w, err := st.Create("job/1/chk-7/map-1.state")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := io.Copy(w, strings.NewReader("state-7")); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	if _, ok := s.Find("job/1", "map", "job/1/chk-7/map-1.state", 7); ok {
		t.Fatal("an uncommitted entry is visible")
	}
	if err := st.Commit(); err != nil {
		t.Fatal(err)
	}

	cases := []struct {
		handle string
		size   int64
		want   string
	}{
		{"job/1/shared/map-0-a-000012.sst", 9, "sst-bytes"},
		{"job/1/chk-5/map-0.state", 7, "state-5"},
		{"job/1/chk-7/map-1.state", 7, "state-7"},
		{"job/1/chk-7/map-1.state", 8, ""}, // wrong size: not served
		{"job/1/chk-9/map-1.state", 7, ""},
	}
	check := func(s *Store) {
		t.Helper()
		for _, c := range cases {
			p, ok := s.Find("job/1", "map", c.handle, c.size)
			if ok != (c.want != "") {
				t.Fatalf("Find(%s, %d) = %v, want found %v", c.handle, c.size, ok, c.want != "")
			}
			if ok {
				b, err := os.ReadFile(p)
				if err != nil || string(b) != c.want {
					t.Fatalf("Find(%s): %q %v, want %q", c.handle, b, err, c.want)
				}
			}
		}
	}
	check(s)
	if got := s.Lookup("job/1", "map", 7, 0, 100); len(got) != 1 || got[0].Key != k7 {
		t.Fatalf("Lookup(7, 0..100) = %+v", got)
	}
	if got := s.Lookup("job/1", "map", 7, 0, 63); len(got) != 0 {
		t.Fatalf("Lookup(7, 0..63) = %+v, want none", got)
	}
	// The source file may go away: the entry holds its own link.
	if err := os.Remove(sst); err != nil {
		t.Fatal(err)
	}
	// Reopen (a restarted TaskManager: the first store closed) with a staging leftover.
	if _, err := s.Stage(Key{Job: "j", Vertex: "v", KeyGroupEnd: 1, Checkpoint: 1}); err != nil {
		t.Fatal(err)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	s2, err := Open(root, nil)
	if err != nil {
		t.Fatal(err)
	}
	check(s2)
	if left, _ := os.ReadDir(filepath.Join(root, stagingDir)); len(left) != 0 {
		t.Fatalf("staging leftovers survive Open: %v", left)
	}
	// Confirming 7 drops checkpoint 5's entry, keeps 7's.
	s2.Confirm("job/1", 7)
	if _, ok := s2.Find("job/1", "map", "job/1/chk-5/map-0.state", 7); ok {
		t.Fatal("checkpoint 5's entry survives Confirm(7)")
	}
	if _, ok := s2.Find("job/1", "map", "job/1/chk-7/map-1.state", 7); !ok {
		t.Fatal("checkpoint 7's entry is gone after Confirm(7)")
	}
	s2.DropJob("job/1")
	if _, err := os.Stat(s2.jobDir("job/1")); !os.IsNotExist(err) {
		t.Fatalf("job directory survives DropJob: %v", err)
	}
}

func TestBadInput(t *testing.T) {
	s, err := Open(t.TempDir(), nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, k := range []Key{{Vertex: "v", Checkpoint: 1}, {Job: "j", Checkpoint: 1}, {Job: "j", Vertex: "v"}, {Job: "j", Vertex: "v", KeyGroupStart: 5, KeyGroupEnd: 2, Checkpoint: 1}} {
		if _, err := s.Stage(k); err == nil {
			t.Errorf("Stage(%+v) accepted", k)
		}
	}
	st, err := s.Stage(Key{Job: "j", Vertex: "v", KeyGroupEnd: 3, Checkpoint: 2})
	if err != nil {
		t.Fatal(err)
	}
	if err := st.Link("h", filepath.Join(t.TempDir(), "missing")); err == nil || !strings.Contains(err.Error(), "job j vertex v") {
		t.Fatalf("linking a missing file: %v", err)
	}
	if _, err := st.Create("h"); err == nil {
		t.Fatal("the same handle twice accepted")
	}
	st.Abort()
	if err := st.Commit(); err == nil {
		t.Fatal("commit after abort accepted")
	}
	if _, err := Open("", nil); err == nil {
		t.Fatal("empty directory accepted")
	}
}
