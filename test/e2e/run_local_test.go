package e2e

import (
	"os"
	"path/filepath"
	"regexp"
	"testing"
	"time"

	"github.com/tidestream/tide/examples"
	"github.com/tidestream/tide/internal/testkit"
)

// TestRunLocalPrintsWebPage: `tide run --target local` (what `make run` does) says where
// the job's web page is, and so does the AM's start line in its log; the bounded job
// runs to its exact answer and the command returns.
func TestRunLocalPrintsWebPage(t *testing.T) {
	work, out := t.TempDir(), t.TempDir()
	args := []string{"--records", "3000", "--keys", "3", "--output", out}
	got, err := tideCmd(t, tideBin, 2*time.Minute, append([]string{"run", "--target", "local", "--job-classname",
		examples.CheckableCountName, "--taskmanagers", "1", "--work-dir", work, "--"}, args...)...)
	if err != nil {
		t.Fatalf("tide run: %v\n%s", err, got)
	}
	if !regexp.MustCompile(`(?m)^  web page:  http://127\.0\.0\.1:\d+/ `).MatchString(got) {
		t.Errorf("tide run printed no web page URL:\n%s", got)
	}
	testkit.CheckExactOutput(t, out, args)
	log, err := os.ReadFile(filepath.Join(work, "log", "jobmanager.log"))
	if err != nil {
		t.Fatal(err)
	}
	if !regexp.MustCompile(`AM started.*web=http://127\.0\.0\.1:\d+/`).Match(log) {
		t.Errorf("the AM's start line names no web page:\n%s", log)
	}
}
