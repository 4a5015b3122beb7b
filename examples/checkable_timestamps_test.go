package examples_test

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/tidestream/tide/examples"
)

func TestReadCommittedTimestamps(t *testing.T) {
	dir := t.TempDir()
	// Two sink subtasks' part files, and an in-progress file that readers ignore.
	files := map[string]string{
		"part-timestamps-1-0-0": "100,1000\n300,1300\n",
		"part-timestamps-1-1-0": "200,1100\n400,1250\n",
		".in-progress-1-0-1":    "500,1400\n",
	}
	for name, body := range files {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	st, err := examples.ReadCommittedTimestamps(dir)
	if err != nil {
		t.Fatal(err)
	}
	var got []int64
	for _, s := range st {
		got = append(got, s.N)
	}
	if want := []int64{100, 200, 400, 300}; !slices.Equal(got, want) {
		t.Fatalf("stamps in time order %v, want %v", got, want)
	}
	if err := examples.CheckTimestamps(st, 400); err != nil {
		t.Fatalf("4 of 4 numbers: %v", err)
	}
	if err := os.WriteFile(filepath.Join(dir, "part-bad"), []byte("100;7\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := examples.ReadCommittedTimestamps(dir); err == nil || !strings.Contains(err.Error(), `"100;7"`) {
		t.Fatalf("a malformed line: err %v, want one naming the line", err)
	}
}

func TestCheckTimestamps(t *testing.T) {
	at := time.UnixMilli(0)
	stamps := func(ns ...int64) []examples.Stamp {
		var out []examples.Stamp
		for _, n := range ns {
			out = append(out, examples.Stamp{N: n, At: at})
		}
		return out
	}
	for _, tc := range []struct {
		name    string
		stamps  []examples.Stamp
		records int64
		err     string // "" = valid
	}{
		{"exact", stamps(100, 200, 300), 300, ""},
		{"records not a multiple", stamps(100, 200), 299, ""},
		{"lost", stamps(100, 300), 300, "2 numbers committed, want 3 (missing e.g. [200])"},
		{"twice", stamps(100, 200, 200, 300), 300, "number 200 committed twice"},
		{"not a multiple", stamps(100, 150, 200), 200, "number 150 is not a multiple of 100"},
		{"beyond the records", stamps(100, 200), 100, "number 200 is not a multiple of 100 in 1..100"},
	} {
		err := examples.CheckTimestamps(tc.stamps, tc.records)
		switch {
		case tc.err == "" && err != nil:
			t.Errorf("%s: %v", tc.name, err)
		case tc.err != "" && (err == nil || !strings.Contains(err.Error(), tc.err)):
			t.Errorf("%s: err %v, want %q", tc.name, err, tc.err)
		}
	}
}

func TestLongestGap(t *testing.T) {
	ms := func(n int64) time.Time { return time.UnixMilli(n) }
	st := []examples.Stamp{{100, ms(0)}, {200, ms(10)}, {300, ms(500)}, {400, ms(520)}, {500, ms(2000)}, {600, ms(2010)}}
	for _, tc := range []struct {
		from, to  int64
		gap       time.Duration
		before, n int64
	}{
		{0, 2010, 1480 * time.Millisecond, 400, 500},
		{0, 400, 490 * time.Millisecond, 200, 300}, // the stretch ending at 500 ms overlaps
		{600, 1000, 1480 * time.Millisecond, 400, 500},
		{1990, 3000, 1480 * time.Millisecond, 400, 500}, // ends inside the window
		{2005, 3000, 10 * time.Millisecond, 500, 600},
		{2011, 3000, 0, 0, 0},
	} {
		gap, a, b := examples.LongestGap(st, ms(tc.from), ms(tc.to))
		if gap != tc.gap || a.N != tc.before || b.N != tc.n {
			t.Errorf("[%d, %d] ms: gap %s between %d and %d, want %s between %d and %d", tc.from, tc.to, gap, a.N, b.N, tc.gap, tc.before, tc.n)
		}
	}
}
