package initgc_test

import (
	"os"
	"os/exec"
	"path/filepath"
	"runtime/debug"
	"strings"
	"testing"
)

// TestOffUntilDone builds a small program on initgc and reads its GC percent at the start
// of main and after Done.
func TestOffUntilDone(t *testing.T) {
	bin := filepath.Join(t.TempDir(), "gcpercent")
	build := exec.Command("go", "build", "-o", bin, "./testdata/gcpercent")
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	for _, tc := range []struct {
		gogc string // "" unset
		want string // GC percent at main's start, after Done
	}{
		{"", "-1 100"},   // off while packages initialize, Go's default after
		{"50", "50 50"},  // the user's GOGC stands
		{"off", "-1 -1"}, // GOGC=off stands too
		{"200", "200 200"},
	} {
		cmd := exec.Command(bin)
		cmd.Env = withoutGOGC(os.Environ())
		if tc.gogc != "" {
			cmd.Env = append(cmd.Env, "GOGC="+tc.gogc)
		}
		out, err := cmd.Output()
		if err != nil {
			t.Fatalf("GOGC=%q: %v", tc.gogc, err)
		}
		if got := strings.TrimSpace(string(out)); got != tc.want {
			t.Errorf("GOGC=%q: GC percent at main's start and after Done = %s, want %s", tc.gogc, got, tc.want)
		}
	}
}

// TestOnInTests: a test binary never has the collector turned off (nothing may call Done).
func TestOnInTests(t *testing.T) {
	p := debug.SetGCPercent(-1)
	debug.SetGCPercent(p)
	if p < 0 && os.Getenv("GOGC") != "off" {
		t.Fatalf("GC percent in a test binary = %d: initgc turned the collector off", p)
	}
}

func withoutGOGC(env []string) []string {
	var out []string
	for _, e := range env {
		if !strings.HasPrefix(e, "GOGC=") {
			out = append(out, e)
		}
	}
	return out
}
