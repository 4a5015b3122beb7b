package storage_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"testing"

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

func TestLocalPermissionDenied(t *testing.T) {
	if os.Geteuid() == 0 {
		t.Skip("root ignores file permissions")
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
}
