package storage_test

import (
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/tidestream/tide/storage"
	"github.com/tidestream/tide/storage/storagetest"
)

func newLocal(t *testing.T) storage.Storage {
	t.Helper()
	s, err := storage.Open(context.Background(), "file://"+filepath.ToSlash(t.TempDir())+"/ckpt", storage.Options{})
	if err != nil {
		t.Fatalf("Open: %v", err)
	}
	return s
}

func TestLocalConformance(t *testing.T) {
	storagetest.Run(t, newLocal)
}

func TestLocalTempFilesAreHiddenAndRemoved(t *testing.T) {
	dir := t.TempDir()
	s, err := storage.Open(context.Background(), "file://"+dir, storage.Options{})
	if err != nil {
		t.Fatalf("Open: %v", err)
	}
	ctx := context.Background()
	w, err := s.Create(ctx, "x/f")
	if err != nil {
		t.Fatalf("Create: %v", err)
	}
	if _, err := w.Write([]byte("abc")); err != nil {
		t.Fatalf("Write: %v", err)
	}
	entries, err := os.ReadDir(filepath.Join(dir, "x"))
	if err != nil || len(entries) != 1 {
		t.Fatalf("ReadDir during write = %v, %v; want one temporary file", entries, err)
	}
	if err := w.Abort(ctx); err != nil {
		t.Fatalf("Abort: %v", err)
	}
	entries, err = os.ReadDir(filepath.Join(dir, "x"))
	if err != nil || len(entries) != 0 {
		t.Fatalf("ReadDir after Abort = %v, %v; want empty", entries, err)
	}
}

// TestLocalPermissionDenied: creating a file where the OS refuses it is ErrPermission.
// Root ignores file modes, so as root the test runs itself again as an unprivileged user
// (nobody, 65534) in a child process: the kernel then refuses the write exactly as it would
// for any operator's account, and the child's verdict is this test's.
func TestLocalPermissionDenied(t *testing.T) {
	if os.Geteuid() == 0 {
		runUnprivileged(t, "TestLocalPermissionDenied")
		return
	}
	dir := t.TempDir()
	s, err := storage.Open(context.Background(), "file://"+dir, storage.Options{})
	if err != nil {
		t.Fatalf("Open: %v", err)
	}
	if err := os.Chmod(dir, 0o500); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = os.Chmod(dir, 0o700) })
	_, err = s.Create(context.Background(), "f")
	if !errors.Is(err, storage.ErrPermission) {
		t.Fatalf("Create in a read-only dir = %v, want ErrPermission", err)
	}
	if !strings.Contains(err.Error(), dir) {
		t.Fatalf("Create in a read-only dir = %v, want the error to name %s", err, dir)
	}
}

// nobody is the uid and gid the root-run tests drop to.
const nobody = 65534

// runUnprivileged runs test (a test of this package) in a copy of this test binary as
// nobody and fails t with its output unless it passed. The copy lives in a directory
// nobody can reach (go test keeps its binary under a root-only directory).
func runUnprivileged(t *testing.T, test string) {
	t.Helper()
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	dir, err := os.MkdirTemp("", "tide-unprivileged-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = os.RemoveAll(dir) })
	if err := os.Chmod(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	bin := filepath.Join(dir, "storage.test")
	data, err := os.ReadFile(self)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(bin, data, 0o755); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, bin, "-test.run=^"+test+"$", "-test.count=1", "-test.v")
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "TMPDIR="+os.TempDir(), "HOME="+dir)
	cmd.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: nobody, Gid: nobody}}
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("%s as uid %d: %v\n%s", test, nobody, err, out)
	}
	if !strings.Contains(string(out), "--- PASS: "+test) {
		t.Fatalf("%s as uid %d did not pass:\n%s", test, nobody, out)
	}
	t.Logf("%s passed as uid %d", test, nobody)
}
