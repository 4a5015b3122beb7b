package stream_test

import (
	"bufio"
	"context"
	"encoding/binary"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/tidestream/tide/stream"
)

// scanLines is what a directory source must emit for a file: its lines as bufio.Scanner
// cuts them.
func scanLines(t *testing.T, content string) []string {
	t.Helper()
	sc := bufio.NewScanner(strings.NewReader(content))
	sc.Buffer(make([]byte, 64<<10), 16<<20)
	var out []string
	for sc.Scan() {
		out = append(out, sc.Text())
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	return out
}

func writeFiles(t *testing.T, files ...string) string {
	t.Helper()
	dir := t.TempDir()
	for i, content := range files {
		if err := os.WriteFile(filepath.Join(dir, fmt.Sprintf("part-%d.txt", i)), []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

// TestDirectoryRangesReadEveryLineOnce: however files are cut into ranges, every line is
// read once, whole, including lines cut at a range end, longer than the read buffer, ended
// by CR LF or by the end of the file; the reader is restarted from its own snapshot after
// every poll.
func TestDirectoryRangesReadEveryLineOnce(t *testing.T) {
	var varied, crlf strings.Builder
	for l := range 700 {
		fmt.Fprintf(&varied, "line %d %s\n", l, strings.Repeat("x", l%23))
		fmt.Fprintf(&crlf, "crlf %d\r\n", l)
	}
	long := strings.Repeat("y", 200<<10) // more than the reader's 64 KiB buffer
	cases := []struct {
		name  string
		files []string
		sizes []int64
	}{
		{"varied lines", []string{varied.String(), varied.String()[:3001]}, []int64{-1, 0, 7, 64, 1000}},
		{"CR LF", []string{crlf.String()}, []int64{-1, 5, 333}},
		{"no final line feed", []string{"a\nbb\nccc", "dd\r\nlast\r"}, []int64{-1, 1, 2, 3}},
		{"empty lines", []string{"\n\n\na\n\n", "\n"}, []int64{-1, 1, 2}},
		{"empty file", []string{"", "one\n"}, []int64{-1, 1}},
		{"long line", []string{"a\n" + long + "\nb\n" + long, "c"}, []int64{-1, 0, 4099, 100000}},
	}
	for _, tc := range cases {
		var want []string
		for _, f := range tc.files {
			want = append(want, scanLines(t, f)...)
		}
		slices.Sort(want)
		dir := writeFiles(t, tc.files...)
		for _, size := range tc.sizes {
			for _, p := range []int{1, 3} {
				t.Run(fmt.Sprintf("%s/split-size=%d/p=%d", tc.name, size, p), func(t *testing.T) {
					got := readAll[string](t, stream.Directory{Dir: dir, SplitSize: size}, p)
					slices.Sort(got)
					if !slices.Equal(got, want) {
						t.Fatalf("%d lines read, want %d\ngot  %.200q\nwant %.200q", len(got), len(want), got, want)
					}
				})
			}
		}
	}
}

// TestDirectorySplitCount: how many splits a directory is cut into.
func TestDirectorySplitCount(t *testing.T) {
	small := writeFiles(t, "a\n", "b\n", "c\n")
	mib := writeFiles(t, strings.Repeat("word word\n", 1<<20/10+1)) // a little over 1 MiB
	sparse := func(size int64) string {                             // one sparse file
		dir := t.TempDir()
		if err := os.WriteFile(filepath.Join(dir, "big"), nil, 0o644); err != nil {
			t.Fatal(err)
		}
		if err := os.Truncate(filepath.Join(dir, "big"), size); err != nil {
			t.Fatal(err)
		}
		return dir
	}
	gib, tenGiB, huge := sparse(1<<30), sparse(10<<30), sparse(100<<30)
	for _, tc := range []struct {
		name        string
		src         stream.Directory
		parallelism int
		want        int
	}{
		{"small files stay whole", stream.Directory{Dir: small}, 4, 3},
		{"1 MiB stays whole (under the smallest automatic range, 32 MiB)", stream.Directory{Dir: mib}, 2, 1},
		{"1 MiB, split size 300000", stream.Directory{Dir: mib, SplitSize: 300000}, 2, 4},
		{"1 MiB, split size 1 KiB", stream.Directory{Dir: mib, SplitSize: 1024}, 2, 1025},
		{"1 GiB at p=1: 16 ranges of 64 MiB", stream.Directory{Dir: gib}, 1, 16},
		{"1 GiB at p=4: the smallest automatic range (32 MiB)", stream.Directory{Dir: gib}, 4, 32},
		{"1 GiB, whole files", stream.Directory{Dir: gib, SplitSize: -1}, 4, 1},
		{"10 GiB at p=4: 16 ranges a subtask", stream.Directory{Dir: tenGiB}, 4, 64},
		{"100 GiB at p=1: the largest automatic range (256 MiB)", stream.Directory{Dir: huge}, 1, 400},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e, err := tc.src.CreateEnumerator(nil, tc.parallelism)
			if err != nil {
				t.Fatal(err)
			}
			if n := e.(*stream.QueueEnumerator).Remaining(); n != tc.want {
				t.Fatalf("%d splits, want %d", n, tc.want)
			}
		})
	}
}

// TestDirectorySplitBeforeRanges: a split checkpointed before files were cut into ranges
// (its progress a line count) restores, and its progress is kept in the new form.
func TestDirectorySplitBeforeRanges(t *testing.T) {
	var content strings.Builder
	for l := range 300 {
		fmt.Fprintf(&content, "line %d\n", l)
	}
	dir := writeFiles(t, content.String())
	path := filepath.Join(dir, "part-0.txt")
	old := stream.Split{ID: path, Data: append(binary.AppendVarint(nil, 4), path...)} // 4 lines read
	ctx := context.Background()
	var got []string
	out := collectorFunc(func(v any, _ int64) error {
		got = append(got, v.(string))
		return nil
	})
	held := []stream.Split{old}
	for range 3 { // restart from the snapshot after every poll
		r, err := stream.Directory{Dir: dir}.CreateReader(stream.ReaderContext{Parallelism: 1, RequestSplit: func() {}})
		if err != nil {
			t.Fatal(err)
		}
		r.AddSplits(held)
		r.NotifyNoMoreSplits()
		if _, err := r.Poll(ctx, out); err != nil {
			t.Fatal(err)
		}
		if held, err = r.SnapshotState(1); err != nil {
			t.Fatal(err)
		}
		if len(held) > 0 && held[0].ID != path {
			t.Fatalf("split ID %q after a restore, want %q", held[0].ID, path)
		}
	}
	want := scanLines(t, content.String())[4:]
	if !slices.Equal(got, want) {
		t.Fatalf("%d lines read, want lines 4..299 (%d): %.100q", len(got), len(want), got)
	}
}
