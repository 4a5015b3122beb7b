package stream_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/tidestream/tide/storage"
	"github.com/tidestream/tide/stream"
	"github.com/tidestream/tide/test/hadoop/hadooptest"
)

// dirContents are three files of numbered lines, the first large enough to be cut into
// ranges by a split size of 8 KiB.
func dirContents() []string {
	var big, small strings.Builder
	for l := range 3000 {
		fmt.Fprintf(&big, "big %d %s\n", l, strings.Repeat("y", l%17))
	}
	for l := range 40 {
		fmt.Fprintf(&small, "small %d\n", l)
	}
	return []string{big.String(), small.String(), "last line without a line feed"}
}

func wantLines(t *testing.T, files []string) []string {
	t.Helper()
	var want []string
	for _, f := range files {
		want = append(want, scanLines(t, f)...)
	}
	slices.Sort(want)
	return want
}

// TestDirectoryReadsFileURIs: Dir may be a file:// URI; it reads what the path reads.
// Files whose names start with "." or "_" are skipped.
func TestDirectoryReadsFileURIs(t *testing.T) {
	files := dirContents()
	dir := writeFiles(t, files...)
	want := wantLines(t, files)
	for _, hidden := range []string{"_SUCCESS", ".part-9.txt.inprogress"} {
		if err := os.WriteFile(filepath.Join(dir, hidden), []byte("not input\n"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	for _, d := range []string{dir, "file://" + filepath.ToSlash(dir), "file://localhost" + filepath.ToSlash(dir)} {
		t.Run(d, func(t *testing.T) {
			got := readAll[string](t, stream.Directory{Dir: d, SplitSize: 8 << 10}, 3)
			slices.Sort(got)
			if !slices.Equal(got, want) {
				t.Fatalf("%d lines read, want %d", len(got), len(want))
			}
		})
	}
	for _, bad := range []string{"file://otherhost/x", "file:relative", "s3://bucket/in", dir + "/missing"} {
		_, err := stream.Directory{Dir: bad}.CreateEnumerator(nil, 1)
		if err == nil || !strings.Contains(err.Error(), bad) {
			t.Errorf("Dir %q: %v, want an error naming it", bad, err)
		}
	}
}

// TestDirectoryOnHDFS: Dir may be an hdfs:// URI. Files written to HDFS are read in ranges
// (a _SUCCESS marker is skipped), every line once, with the reader restarted from its own snapshot after every poll (each
// restart reopens its file in HDFS at the checkpointed offset). A directory that is not
// there is an error naming it.
func TestDirectoryOnHDFS(t *testing.T) {
	env := hadooptest.Require(t)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	rel := "tide-test/directory-source-" + strings.ReplaceAll(time.Now().Format("150405.000000"), ".", "")
	root, err := storage.Open(ctx, env.URI+"/", storage.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := root.Delete(context.Background(), rel); err != nil {
			t.Error(err)
		}
		root.Close()
	})
	files := dirContents()
	names := []string{"part-0.txt", "part-1.txt", "part-2.txt", "_SUCCESS"}
	for i, content := range append(files, "not input\n") {
		w, err := root.Create(ctx, rel+"/"+names[i])
		if err != nil {
			t.Fatal(err)
		}
		if _, err := w.Write([]byte(content)); err != nil {
			t.Fatal(err)
		}
		if err := w.Commit(ctx); err != nil {
			t.Fatal(err)
		}
	}
	got := readAll[string](t, stream.Directory{Dir: env.URI + "/" + rel, SplitSize: 8 << 10}, 3)
	slices.Sort(got)
	if want := wantLines(t, files); !slices.Equal(got, want) {
		t.Fatalf("%d lines read, want %d", len(got), len(want))
	}
	missing := env.URI + "/" + rel + "-missing"
	if _, err := (stream.Directory{Dir: missing}).CreateEnumerator(nil, 1); err == nil || !strings.Contains(err.Error(), missing) {
		t.Fatalf("missing directory: %v, want an error naming %s", err, missing)
	}
}
