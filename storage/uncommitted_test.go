package storage_test

import (
	"context"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/tidestream/tide/storage"
	"github.com/tidestream/tide/test/hadoop/hadooptest"
)

// TestSweepUncommitted: the temporary files of killed writers are deleted when match accepts
// their target name; committed files, other targets, other directories and the files of
// running writers that match rejects stay.
func TestSweepUncommitted(t *testing.T) {
	for _, tc := range []struct {
		name string
		open func(t *testing.T) storage.Storage
	}{
		{"file", newLocal},
		{"hdfs", func(t *testing.T) storage.Storage { return newHDFS(t, hadooptest.Require(t), storage.Options{}) }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
			defer cancel()
			s := tc.open(t)
			defer s.Close()
			if got, err := storage.SweepUncommitted(ctx, s, "out", func(string) bool { return true }); err != nil || len(got) != 0 {
				t.Fatalf("sweeping a missing directory: %v, %v; want nothing", got, err)
			}
			for _, n := range []string{"out/.old-1.pending", "out/.old-2.pending", "out/.new-1.pending", "other/.old-3.pending"} {
				if _, err := storage.PlantUncommitted(ctx, s, n, []byte("x")); err != nil {
					t.Fatal(err)
				}
			}
			if err := storage.WriteFile(ctx, s, "out/.old-4.pending", []byte("committed")); err != nil {
				t.Fatal(err)
			}
			got, err := storage.SweepUncommitted(ctx, s, "out", func(target string) bool { return strings.HasPrefix(target, ".old-") })
			if err != nil {
				t.Fatal(err)
			}
			slices.Sort(got)
			if want := []string{".old-1.pending", ".old-2.pending"}; !slices.Equal(got, want) {
				t.Fatalf("swept %v, want %v", got, want)
			}
			all, err := storage.SweepUncommitted(ctx, s, "out", func(string) bool { return true })
			if err != nil || !slices.Equal(all, []string{".new-1.pending"}) {
				t.Fatalf("what was left uncommitted in out: %v, %v; want the other target only", all, err)
			}
			if got, err := storage.SweepUncommitted(ctx, s, "other", func(string) bool { return true }); err != nil || len(got) != 1 {
				t.Fatalf("other directory: %v, %v; want its one file untouched by the sweeps of out", got, err)
			}
			if b, err := storage.ReadFile(ctx, s, "out/.old-4.pending"); err != nil || string(b) != "committed" {
				t.Fatalf("the committed file: %q, %v", b, err)
			}
		})
	}
}
