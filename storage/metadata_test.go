package storage_test

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/tidestream/tide/storage"
)

// TestLocalListAndStatErrors pins what Stat and List (shared by both storages) report
// for names that are not a listable directory.
func TestLocalListAndStatErrors(t *testing.T) {
	s := newLocal(t)
	ctx := context.Background()
	if err := storage.WriteFile(ctx, s, "dir/f", []byte("x")); err != nil {
		t.Fatalf("WriteFile(dir/f): %v", err)
	}
	tests := []struct {
		name     string
		call     func() error
		wantKind error // nil: an error without a kind
		wantText string
	}{
		{"List of a file", func() error { _, err := s.List(ctx, "dir/f"); return err }, nil, "is a file, want a directory"},
		{"List of a missing directory", func() error { _, err := s.List(ctx, "nope"); return err }, storage.ErrNotFound, "nope"},
		{"List of a bad name", func() error { _, err := s.List(ctx, "../x"); return err }, storage.ErrInvalidName, "list"},
		{"Stat of a missing file", func() error { _, err := s.Stat(ctx, "dir/g"); return err }, storage.ErrNotFound, "dir/g"},
		{"Stat of a bad name", func() error { _, err := s.Stat(ctx, "/abs"); return err }, storage.ErrInvalidName, "stat"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := tt.call()
			var se *storage.Error
			if !errors.As(err, &se) {
				t.Fatalf("error %v (%T), want a *storage.Error", err, err)
			}
			if se.Kind != tt.wantKind || !strings.Contains(err.Error(), tt.wantText) {
				t.Fatalf("error %v (kind %v), want kind %v and %q", err, se.Kind, tt.wantKind, tt.wantText)
			}
		})
	}
	root, err := s.Stat(ctx, "")
	if err != nil || !root.IsDir {
		t.Fatalf("Stat(root) = %+v, %v; want a directory", root, err)
	}
	infos, err := s.List(ctx, "dir")
	if err != nil || len(infos) != 1 || infos[0].Name != "f" || infos[0].Size != 1 {
		t.Fatalf("List(dir) = %+v, %v; want [f (1 byte)]", infos, err)
	}
}
