package tidecli

import (
	"os"
	"path/filepath"
	"testing"
)

// TestLocalOutcome reads the final status and diagnostics from an AM log as log/slog writes
// it: the last deregistration counts, quoted values are unquoted, and a log without one
// says so.
func TestLocalOutcome(t *testing.T) {
	for _, tc := range []struct {
		name, log    string
		status, diag string
		ok           bool
	}{
		{"none", "time=x level=INFO msg=\"job status changed\" job=J\n", "", "", false},
		{"quoted diagnostics", `time=x level=INFO msg="standalone application deregistered" job=CheckableCount jobID=43c2 status=KILLED diagnostics="job cancelled; no checkpoint had completed, so none is kept (RETAIN_ON_CANCELLATION): a new run starts from the beginning"` + "\n",
			"KILLED", "job cancelled; no checkpoint had completed, so none is kept (RETAIN_ON_CANCELLATION): a new run starts from the beginning", true},
		{"bare diagnostics, the last line wins", "time=x level=INFO msg=\"standalone application deregistered\" status=FAILED diagnostics=first\n" +
			"time=y level=INFO msg=\"standalone application deregistered\" status=SUCCEEDED diagnostics=done\n", "SUCCEEDED", "done", true},
		{"escaped quote", `time=x level=INFO msg="standalone application deregistered" status=FAILED diagnostics="operator \"count\" failed"` + "\n", "FAILED", `operator "count" failed`, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			if err := os.WriteFile(filepath.Join(dir, "jobmanager.log"), []byte(tc.log), 0o644); err != nil {
				t.Fatal(err)
			}
			status, diag, ok := localOutcome(dir)
			if status != tc.status || diag != tc.diag || ok != tc.ok {
				t.Errorf("localOutcome = %q, %q, %v; want %q, %q, %v", status, diag, ok, tc.status, tc.diag, tc.ok)
			}
		})
	}
	if _, _, ok := localOutcome(t.TempDir()); ok {
		t.Error("a directory without jobmanager.log has an outcome")
	}
}

// FuzzParseOutcome: any log line parses without a panic, and a line that has a status
// yields it.
func FuzzParseOutcome(f *testing.F) {
	f.Add(`time=x msg="standalone application deregistered" status=KILLED diagnostics="job cancelled"`)
	f.Add(`status= diagnostics="unterminated`)
	f.Add(` status="q\"x" diagnostics=`)
	f.Fuzz(func(t *testing.T, line string) {
		status, _, ok := parseOutcome(line)
		if !ok && status != "" {
			t.Fatalf("parseOutcome(%q): status %q without ok", line, status)
		}
	})
}
