package e2e

import (
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/tidestream/tide/standalone"
)

var savepointDoneRE = regexp.MustCompile(`Savepoint of job \S+ completed: (\S+)`)

// TestSavepointUnderPathWithSpaces: savepoints are allowed only under the configured roots
// (a target outside them, such as file:///../../etc, is refused with the target and the roots
// named, and nothing is written); a savepoint into a root whose name has spaces, '#' and '%'
// is printed as a URI, and a job starts from it in either form: the printed (encoded) URI,
// which then runs to the exact answer, and the literal absolute path.
func TestSavepointUnderPathWithSpaces(t *testing.T) {
	out := t.TempDir()
	args := []string{"--records", "150000", "--keys", "7", "--rate", "3000", "--output", out}
	root := filepath.Join(t.TempDir(), "save points #1 100%")
	rootURI := (&url.URL{Scheme: "file", Path: root}).String()
	first := startSavepointCluster(t, args, 2, t.TempDir(), "", "state.savepoints.dir="+root)
	id := jobID(t, first)
	d := waitRunningAt(t, first, id, 2)
	waitCheckpointIn(t, first, id, d.Attempt)

	cli, err := tideCmd(t, tideBin, time.Minute, "savepoint", id, "--dir", "file:///../../etc", "-m", first.RESTAddress())
	if code := exitCode(err); code != 1 {
		t.Errorf("tide savepoint --dir file:///../../etc: exit %d, want 1 (refused)\n%s", code, cli)
	}
	for _, w := range []string{"file:///etc", "outside the allowed savepoint directories", rootURI, "state.savepoints.allowed-dirs"} {
		if !strings.Contains(cli, w) {
			t.Errorf("the refusal lacks %q:\n%s", w, cli)
		}
	}
	if entries, _ := filepath.Glob("/etc/savepoint-*"); len(entries) != 0 {
		t.Fatalf("a savepoint was written into /etc: %v", entries)
	}

	cli, err = tideCmd(t, tideBin, 2*time.Minute, "savepoint", id, "--dir", root, "-m", first.RESTAddress())
	if err != nil {
		t.Fatalf("tide savepoint --dir %q: %v\n%s", root, err, cli)
	}
	m := savepointDoneRE.FindStringSubmatch(cli)
	if m == nil {
		t.Fatalf("tide savepoint printed no location:\n%s", cli)
	}
	location := m[1]
	entries, err := os.ReadDir(root)
	if err != nil || len(entries) != 1 {
		t.Fatalf("the root %q holds %v (%v), want one savepoint directory", root, entries, err)
	}
	rawPath := filepath.Join(root, entries[0].Name())
	if want := (&url.URL{Scheme: "file", Path: rawPath}).String(); location != want {
		t.Fatalf("tide savepoint printed %s, want the URI %s", location, want)
	}
	cancelJob(t, first, id)

	// The literal path: the AM accepts it and starts from the savepoint (no TaskManagers:
	// it only has to get that far).
	literal := startLocal(t, standalone.LocalOptions{Dynamic: reactive(t.TempDir(), "300 ms"),
		JobName: "CheckableCount", JobArgs: args, FromSavepoint: rawPath})
	logFile := filepath.Join(literal.LogDir(), "jobmanager.log")
	deadline := time.Now().Add(time.Minute)
	for {
		b, _ := os.ReadFile(logFile)
		if strings.Contains(string(b), "starting from savepoint") && strings.Contains(string(b), location) {
			break
		}
		select {
		case <-literal.AMDone():
			t.Fatalf("the AM started from %q exited: %v\n%s", rawPath, literal.AMErr(), b)
		default:
		}
		if time.Now().After(deadline) {
			t.Fatalf("the AM started from %q does not say it starts from %s:\n%s", rawPath, location, b)
		}
		time.Sleep(100 * time.Millisecond)
	}
	if err := literal.Stop(t.Context()); err != nil {
		t.Logf("stopping: %v", err)
	}

	// The printed URI: the job restores and finishes with the exact answer.
	second := startSavepointCluster(t, args, 2, t.TempDir(), location)
	waitRunningAt(t, second, id, 2)
	waitExact(t, second, 4*time.Minute, out, args)
}
