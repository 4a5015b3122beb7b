package stream

import (
	"strings"
	"testing"
)

func TestHiddenPart(t *testing.T) {
	for _, tc := range []struct {
		name    string
		run     string
		attempt int64
		ok      bool
	}{
		{".sink-0a1b2c3d.1-0-1.inprogress", "0a1b2c3d", 1, true},
		{".sink-0a1b2c3d.12-3-0.pending", "0a1b2c3d", 12, true},
		{".sink-7-0-0.inprogress", "", 7, true},
		{".sink-7-0-0.pending", "", 7, true},
		{"part-sink-0a1b2c3d.1-0-1", "", 0, false},
		{".sink-0a1b2c3d.1-0-1", "", 0, false},
		{".other-0a1b2c3d.1-0-1.inprogress", "", 0, false},
		{".sink-.1-0-1.inprogress", "", 0, false},
		{".sink-a.b-0-1.inprogress", "", 0, false},
		{".sink-1-x-1.inprogress", "", 0, false},
		{".sink-1-0.inprogress", "", 0, false},
		{".sink--1-0-0.inprogress", "", 0, false},
	} {
		run, att, ok := hiddenPart(tc.name, "sink")
		if ok != tc.ok || run != tc.run || att != tc.attempt {
			t.Errorf("hiddenPart(%q) = %q, %d, %v; want %q, %d, %v", tc.name, run, att, ok, tc.run, tc.attempt, tc.ok)
		}
	}
}

// FuzzHiddenPart: names the sink writes parse back to their run id and attempt; anything
// else parses to a consistent answer or not at all, without panicking.
func FuzzHiddenPart(f *testing.F) {
	f.Add(".sink-0a1b2c3d.1-0-1.inprogress", "0a1b2c3d", int64(1), 0, 1)
	f.Add(".sink-3-0-0.pending", "", int64(3), 2, 9)
	f.Fuzz(func(t *testing.T, name, run string, attempt int64, subtask, seq int) {
		if r, a, ok := hiddenPart(name, "sink"); ok && (a < 0 || strings.Contains(r, "-")) {
			t.Fatalf("hiddenPart(%q) = %q, %d", name, r, a)
		}
		if attempt < 0 || subtask < 0 || seq < 0 || strings.ContainsAny(run, "-./") {
			return
		}
		rt := Runtime{OperatorID: "sink", RunID: run, Attempt: attempt, Subtask: subtask}
		for _, suffix := range []string{inProgressSuffix, pendingSuffix} {
			n := "." + partBase(rt, seq) + suffix
			r, a, ok := hiddenPart(n, "sink")
			if !ok || r != run || a != attempt {
				t.Fatalf("hiddenPart(%q) = %q, %d, %v; want %q, %d", n, r, a, ok, run, attempt)
			}
		}
	})
}
