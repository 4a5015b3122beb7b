package am

import (
	"strings"
	"testing"
)

func TestParseCrashPoint(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want int64
		err  bool
	}{
		{"", 0, false},
		{"checkpoint-completed:1", 1, false},
		{"checkpoint-completed:42", 42, false},
		{"checkpoint-completed:0", 0, true},
		{"checkpoint-completed:-3", 0, true},
		{"checkpoint-completed", 0, true},
		{"checkpoint-completed:x", 0, true},
		{"checkpoint-triggered:3", 0, true},
		{"savepoint-acknowledged:0", 0, true},
		{"savepoint-acknowledged:", 0, true},
	} {
		got, err := parseCrashPoint(tc.in)
		if (err != nil) != tc.err || got.afterCompleted != tc.want {
			t.Errorf("parseCrashPoint(%q) = %+v, %v; want %d, error %v", tc.in, got, err, tc.want, tc.err)
		}
		if err != nil && !strings.Contains(err.Error(), CrashPointEnv) {
			t.Errorf("parseCrashPoint(%q): error %q does not name %s", tc.in, err, CrashPointEnv)
		}
	}
}

func TestParseCrashPointSavepoint(t *testing.T) {
	for in, want := range map[string]crashPoint{
		"savepoint-acknowledged:2": {savepointAcks: 2},
		"savepoint-copied:3":       {savepointFiles: 3},
	} {
		if got, err := parseCrashPoint(in); err != nil || got != want {
			t.Errorf("parseCrashPoint(%s) = %+v, %v; want %+v", in, got, err, want)
		}
	}
	for _, in := range []string{"savepoint-copied:0", "savepoint-copied:", "savepoint-copied:-1"} {
		if got, err := parseCrashPoint(in); err == nil {
			t.Errorf("parseCrashPoint(%s) = %+v; want an error", in, got)
		}
	}
}

func FuzzParseCrashPoint(f *testing.F) {
	f.Add("checkpoint-completed:7")
	f.Add("checkpoint-completed:")
	f.Add(":")
	f.Add("savepoint-acknowledged:3")
	f.Add("savepoint-copied:1")
	f.Fuzz(func(t *testing.T, v string) {
		cp, err := parseCrashPoint(v)
		if err == nil && v != "" && cp.afterCompleted < 1 && cp.savepointAcks < 1 && cp.savepointFiles < 1 {
			t.Fatalf("parseCrashPoint(%q) accepted %+v", v, cp)
		}
		if err != nil && cp != (crashPoint{}) {
			t.Fatalf("parseCrashPoint(%q) failed but returned %+v", v, cp)
		}
	})
}
