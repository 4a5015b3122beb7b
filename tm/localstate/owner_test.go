package localstate

import (
	"bufio"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/tidestream/tide/internal/dirlock"
)

// Two TaskManagers with the same id (two `tide run --target local` at once) open stores
// under one root at the same time: each gets a directory of its own, neither removes the
// other's staged entry, and opening a directory another store owns fails.
func TestTwoStoresInOneRootAtOnce(t *testing.T) {
	root := t.TempDir()
	a, err := OpenNew(root, "tm-1", nil)
	if err != nil {
		t.Fatal(err)
	}
	defer a.Close()
	k := Key{Job: "job", Vertex: "map", KeyGroupEnd: 127, Checkpoint: 3}
	staged, err := a.Stage(k) // in flight while the second store opens
	if err != nil {
		t.Fatal(err)
	}
	w, err := staged.Create("job/chk-3/map-0.state")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := w.Write([]byte("state of a")); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}

	b, err := OpenNew(root, "tm-1", nil)
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	if a.Dir() == b.Dir() || filepath.Dir(a.Dir()) != root || filepath.Dir(b.Dir()) != root {
		t.Fatalf("stores at %s and %s, want two directories under %s", a.Dir(), b.Dir(), root)
	}
	for _, s := range []*Store{a, b} {
		if base := filepath.Base(s.Dir()); !strings.HasPrefix(base, DirPrefix+"tm-1-"+strconv.Itoa(os.Getpid())+"-") {
			t.Errorf("store directory %s does not name the TaskManager and the process", base)
		}
	}
	if err := staged.Commit(); err != nil {
		t.Fatalf("the first store's staged entry after the second store opened: %v", err)
	}
	if err := b.Put(k, []File{{Handle: "job/chk-3/map-0.state", Path: writeTemp(t, t.TempDir(), "s", "state of b!")}}); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		s    *Store
		want string
	}{{a, "state of a"}, {b, "state of b!"}} {
		p, ok := c.s.Find("job", "map", "job/chk-3/map-0.state", int64(len(c.want)))
		if !ok {
			t.Fatalf("store %s lost its entry", c.s.Dir())
		}
		if got, err := os.ReadFile(p); err != nil || string(got) != c.want {
			t.Fatalf("store %s serves %q (%v), want %q", c.s.Dir(), got, err, c.want)
		}
	}

	if _, err := Open(a.Dir(), nil); err == nil || !strings.Contains(err.Error(), "in use by another local state store (process "+strconv.Itoa(os.Getpid())) {
		t.Fatalf("opening a directory another store owns: %v", err)
	}
	if removed, err := CleanStale(root, nil); err != nil || len(removed) != 0 {
		t.Fatalf("CleanStale with both stores open removed %v (%v)", removed, err)
	}
	// Closed, a store's directory is stale: the next store opened under the root removes it.
	if err := a.Close(); err != nil {
		t.Fatal(err)
	}
	c, err := OpenNew(root, "tm-2", nil)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if _, err := os.Stat(a.Dir()); !os.IsNotExist(err) {
		t.Fatalf("the closed store's directory survives the next OpenNew: %v", err)
	}
	if _, err := os.Stat(b.Dir()); err != nil {
		t.Fatalf("the open store's directory: %v", err)
	}
	if err := c.Delete(); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(c.Dir()); !os.IsNotExist(err) {
		t.Fatalf("Delete left %s: %v", c.Dir(), err)
	}
}

// helperEnv makes the test binary a TaskManager-like process that opens a store under the
// root the variable names, commits an entry, prints the directory and waits to be killed.
const helperEnv = "TIDE_LOCALSTATE_HELPER_ROOT"

func TestMain(m *testing.M) {
	if root := os.Getenv(helperEnv); root != "" {
		os.Exit(helperStore(root))
	}
	os.Exit(m.Run())
}

func helperStore(root string) int {
	s, err := OpenNew(root, "tm-1", nil)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	st, err := s.Stage(Key{Job: "job", Vertex: "map", KeyGroupEnd: 1, Checkpoint: 1})
	if err == nil {
		var w interface{ Close() error }
		if w, err = st.Create("job/chk-1/map-0.state"); err == nil {
			err = w.Close()
		}
	}
	if err == nil {
		err = st.Commit()
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	fmt.Println(s.Dir())
	time.Sleep(time.Hour)
	return 0
}

// A TaskManager killed with SIGKILL leaves its store directory; the kernel drops its lock,
// and the next store opened under the root removes it. A directory without a lock file
// (an older tide's) goes once it is older than the grace; a newer one stays.
func TestStaleStoreOfAKilledProcessIsCleaned(t *testing.T) {
	root := t.TempDir()
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), helperEnv+"="+root)
	cmd.Stderr = os.Stderr
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	line, err := bufio.NewReader(out).ReadString('\n')
	if err != nil {
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
		t.Fatalf("the helper store did not start: %v", err)
	}
	dead := strings.TrimSpace(line)
	if !strings.HasPrefix(filepath.Base(dead), DirPrefix+"tm-1-"+strconv.Itoa(cmd.Process.Pid)+"-") {
		t.Fatalf("the helper's store %s does not name its PID %d", dead, cmd.Process.Pid)
	}
	// While the helper lives, its directory is not stale.
	if removed, err := CleanStale(root, nil); err != nil || len(removed) != 0 {
		t.Fatalf("CleanStale removed %v (%v) while its owner runs", removed, err)
	}
	if _, err := Open(dead, nil); err == nil || !strings.Contains(err.Error(), "process "+strconv.Itoa(cmd.Process.Pid)) {
		t.Fatalf("opening the live helper's store: %v", err)
	}
	if err := cmd.Process.Kill(); err != nil {
		t.Fatal(err)
	}
	_ = cmd.Wait()

	old := filepath.Join(root, DirPrefix+"tm-1")
	fresh := filepath.Join(root, DirPrefix+"tm-2")
	for _, d := range []string{old, fresh} {
		if err := os.MkdirAll(filepath.Join(d, "job"), 0o700); err != nil {
			t.Fatal(err)
		}
	}
	past := time.Now().Add(-2 * dirlock.UnlockedGrace)
	if err := os.Chtimes(old, past, past); err != nil {
		t.Fatal(err)
	}
	other := filepath.Join(root, "not-a-store")
	if err := os.Mkdir(other, 0o700); err != nil {
		t.Fatal(err)
	}

	s, err := OpenNew(root, "tm-1", nil)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	for _, c := range []struct {
		dir  string
		kept bool
	}{{dead, false}, {old, false}, {fresh, true}, {other, true}, {s.Dir(), true}} {
		_, err := os.Stat(c.dir)
		if kept := err == nil; kept != c.kept {
			t.Errorf("%s: kept %v (%v), want kept %v", c.dir, kept, err, c.kept)
		}
	}
}
