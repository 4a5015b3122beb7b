package state

import (
	"bufio"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/cockroachdb/pebble/v2"
)

// holderEnv makes the test binary a process that opens a Pebble instance under the
// directory it names, prints the instance's directory and waits to be killed.
const holderEnv = "TIDE_TEST_PEBBLE_HOLDER"

func TestMain(m *testing.M) {
	if dir := os.Getenv(holderEnv + "_BARE"); dir != "" {
		// A Pebble instance directory without tide's lock file (an earlier tide).
		db, err := pebble.Open(dir, &pebble.Options{})
		if err != nil {
			panic(err)
		}
		defer db.Close()
		os.Stdout.WriteString(dir + "\n")
		time.Sleep(10 * time.Minute)
		os.Exit(0)
	}
	if dir := os.Getenv(holderEnv); dir != "" {
		p, err := OpenPebble(PebbleOptions{Dir: dir, Name: "holder"})
		if err != nil {
			panic(err)
		}
		if err := p.Put(1, "s", []byte("k"), []byte("v")); err != nil {
			panic(err)
		}
		os.Stdout.WriteString(p.Dir() + "\n")
		time.Sleep(10 * time.Minute)
		os.Exit(0)
	}
	os.Exit(m.Run())
}

// startHolder starts a process holding an instance under dir and returns it and its
// instance directory.
func startHolder(t *testing.T, dir string) (*exec.Cmd, string) {
	return startHolderEnv(t, holderEnv, dir)
}

func startHolderEnv(t *testing.T, env, dir string) (*exec.Cmd, string) {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), env+"="+dir)
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cmd.Process.Kill(); _ = cmd.Wait() })
	line, err := bufio.NewReader(out).ReadString('\n')
	if err != nil {
		t.Fatalf("holder process: %v", err)
	}
	return cmd, strings.TrimSpace(line)
}

func TestCleanStaleRemovesOnlyUnusedInstances(t *testing.T) {
	dir := t.TempDir()
	// A live instance of this process, and one of another live process.
	live, err := OpenPebble(PebbleOptions{Dir: dir, Name: "live"})
	if err != nil {
		t.Fatal(err)
	}
	defer live.Close()
	_, otherLive := startHolder(t, dir)
	// An instance whose process was killed with SIGKILL.
	killed, deadDir := startHolder(t, dir)
	if err := killed.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	_ = killed.Wait()
	// Directories without a lock file: an old one (an earlier tide), a fresh one (being created).
	old := filepath.Join(dir, instancePrefix+"old-1")
	fresh := filepath.Join(dir, instancePrefix+"fresh-1")
	other := filepath.Join(dir, "not-tide")
	for _, d := range []string{old, fresh, other} {
		if err := os.Mkdir(d, 0o700); err != nil {
			t.Fatal(err)
		}
	}
	// An old-style instance (no lock file) that a live process of an earlier tide has open.
	bare := filepath.Join(dir, instancePrefix+"bare-1")
	startHolderEnv(t, holderEnv+"_BARE", bare)
	long := time.Now().Add(-time.Hour)
	for _, d := range []string{old, bare} {
		if err := os.Chtimes(d, long, long); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.Chtimes(other, long, long); err != nil {
		t.Fatal(err)
	}

	removed, err := CleanStale(dir, nil)
	if err != nil {
		t.Fatal(err)
	}
	slices.Sort(removed)
	want := []string{deadDir, old}
	slices.Sort(want)
	if !slices.Equal(removed, want) {
		t.Fatalf("removed %v, want %v", removed, want)
	}
	for _, d := range []string{live.Dir(), otherLive, fresh, other, bare} {
		if _, err := os.Stat(d); err != nil {
			t.Fatalf("%s was removed: %v", d, err)
		}
	}
	for _, d := range want {
		if _, err := os.Stat(d); !os.IsNotExist(err) {
			t.Fatalf("%s still there: %v", d, err)
		}
	}
	// The live instance still works after the cleaner looked at it.
	if err := live.Put(1, "s", []byte("k"), []byte("v")); err != nil {
		t.Fatal(err)
	}
	if removed, err := CleanStale(filepath.Join(dir, "missing"), nil); err != nil || removed != nil {
		t.Fatalf("missing directory: %v %v", removed, err)
	}
}
