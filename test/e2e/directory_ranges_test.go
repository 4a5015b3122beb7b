package e2e

import (
	"bufio"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/tidestream/tide/api"
	"github.com/tidestream/tide/examples"
	"github.com/tidestream/tide/internal/testkit"
)

// TestWordCountRangesExactlyOnce: WordCount reads one file larger than the directory
// source's smallest automatic split size (32 MiB), so the file is read as byte ranges by
// both subtasks. A TaskManager is killed after the first checkpoint, while the ranges are
// half read; the job goes on at parallelism 1 from the checkpoint, its reader seeking to
// the checkpointed offsets. The committed output must hold every running count of every
// word exactly once: (w,1) to (w,n) for a word seen n times.
func TestWordCountRangesExactlyOnce(t *testing.T) {
	parts := t.TempDir()
	words, err := testkit.WriteWordCountInput(parts, 6) // 4 files of 15 MB
	if err != nil {
		t.Fatal(err)
	}
	in := t.TempDir()
	if err := concatFiles(filepath.Join(in, "all.txt"), parts, 4); err != nil {
		t.Fatal(err)
	}
	want := map[string]int{}
	if err := eachLine(filepath.Join(in, "all.txt"), func(line string) {
		examples.Tokenize(line, func(w string) { want[w]++ })
	}); err != nil {
		t.Fatal(err)
	}

	out := t.TempDir()
	c := startCluster(t, examples.WordCountName, []string{"--input", in, "--output", out}, 2, reactive(t.TempDir(), "100 ms"))
	id := jobID(t, c)
	d := waitRunningAt(t, c, id, 2)
	waitCheckpointIn(t, c, id, d.Attempt)
	// Both source subtasks read: the one file went out in ranges.
	testkit.WaitFor(t, "both source subtasks reading the one file", func() (bool, error) {
		select {
		case <-c.AMDone():
			t.Fatalf("WordCount ended (AM error: %v) before both source subtasks were seen reading", c.AMErr())
		default:
		}
		var v api.VertexDetails
		if err := rest(c, "/jobs/"+id+"/vertices/lines", &v); err != nil {
			return false, err
		}
		reading := 0
		for _, s := range v.Subtasks {
			if s.Attempt == d.Attempt && s.Metrics.WriteRecords > 0 {
				reading++
			}
		}
		return reading == 2, fmt.Errorf("subtasks %+v", v.Subtasks)
	})
	if err := c.Signal("tm-2", syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	if d1 := waitRunningAt(t, c, id, 1); d1.Attempt <= d.Attempt {
		t.Fatalf("attempt %d after the kill, want one after %d", d1.Attempt, d.Attempt)
	}
	waitSucceeded(t, c, 5*time.Minute)
	checkRunningCounts(t, out, want, words)
}

// checkRunningCounts checks WordCount's committed output in out against want (each word's
// count in the input, words in all): every running count (w,k), k = 1..want[w], once.
func checkRunningCounts(t *testing.T, out string, want map[string]int, words int) {
	t.Helper()
	// Every count of a word once: seen[w][k-1] marks (w,k).
	seen := map[string][]bool{}
	for w, n := range want {
		seen[w] = make([]bool, n)
	}
	lines := 0
	if err := examples.EachCommittedLine(out, func(file, line string) error {
		lines++
		w, k, ok := parseWordCount(line)
		if !ok || k < 1 || k > len(seen[w]) {
			return fmt.Errorf("%s: %q is no running count of the input", file, line)
		}
		if seen[w][k-1] {
			return fmt.Errorf("%s: %q committed twice", file, line)
		}
		seen[w][k-1] = true
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	if lines != words {
		t.Fatalf("%d running counts committed, want one per word (%d)", lines, words)
	}
}

// parseWordCount reads "(word,count)".
func parseWordCount(line string) (string, int, bool) {
	body, open := strings.CutPrefix(line, "(")
	body, closed := strings.CutSuffix(body, ")")
	if !open || !closed {
		return "", 0, false
	}
	i := strings.LastIndexByte(body, ',')
	if i < 0 {
		return "", 0, false
	}
	k, err := strconv.Atoi(body[i+1:])
	return body[:i], k, err == nil
}

// concatFiles writes dir's part-0.txt..part-(n-1).txt into one file.
func concatFiles(dst, dir string, n int) error {
	f, err := os.Create(dst)
	if err != nil {
		return err
	}
	for i := range n {
		src, err := os.Open(filepath.Join(dir, fmt.Sprintf("part-%d.txt", i)))
		if err != nil {
			f.Close()
			return err
		}
		_, err = io.Copy(f, src)
		src.Close()
		if err != nil {
			f.Close()
			return err
		}
	}
	return f.Close()
}

func eachLine(path string, fn func(string)) error {
	f, err := os.Open(path)
	if err != nil {
		return err
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		fn(sc.Text())
	}
	return sc.Err()
}
