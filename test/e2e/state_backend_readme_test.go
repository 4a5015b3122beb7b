package e2e

import (
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/tidestream/tide/internal/testkit"
)

// TestStateBackendReadmeCommands runs the README's "Choosing a state backend" example as
// written: its yaml lines go into a copy of conf/flink-conf.yaml (beside this cluster's
// ports), its sh block runs from the repository's top folder with bin/ scripts, and only
// /tmp/tide is replaced by a temporary directory. The job starts on pebble with incremental
// checkpoints (the TaskManager keeps the keyed state in pebble under the configured
// directory), takes a savepoint (CANONICAL: it stands alone, without pebble files), is
// cancelled, and goes on from the savepoint on hashmap: the AM says it started from the
// savepoint, and the committed output is exact.
func TestStateBackendReadmeCommands(t *testing.T) {
	yaml, script := readmeConfAndScript(t, "## Choosing a state backend",
		"-Dstate.backend.type=hashmap", "-Dstate.backend.type=pebble", "bin/tide savepoint", "--fromSavepoint", "/tmp/tide/out")
	base := t.TempDir()
	local := func(s string) string { return strings.ReplaceAll(s, "/tmp/tide", base) }
	settings := strings.Split(strings.TrimSpace(local(yaml)), "\n")
	s := newScripted(t, settings...)

	out := runScript(t, repoRoot(t), s.env(), local(script), 5*time.Minute)
	t.Logf("README state backend commands:\n%s", out)
	if !regexp.MustCompile(`completed: file://` + regexp.QuoteMeta(base) + `/savepoints/savepoint-\S+`).MatchString(out) {
		t.Fatalf("tide savepoint printed no savepoint under %s/savepoints:\n%s", base, out)
	}

	// The second job runs to its end (--records at --rate: 100 s); the AM exits with it.
	for deadline := time.Now().Add(6 * time.Minute); ; time.Sleep(time.Second) {
		running := slices.ContainsFunc(s.pids("standalonejob"), alive)
		if !running {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the job started from the savepoint did not finish (its AM still runs)")
		}
	}
	sps, _ := filepath.Glob(filepath.Join(base, "savepoints", "savepoint-*"))
	if len(sps) != 1 {
		t.Fatalf("savepoints under %s/savepoints: %v, want one", base, sps)
	}
	checkCanonicalSavepoint(t, sps[0])
	outDir := filepath.Join(base, "out")
	testkit.CheckExactOutput(t, outDir, readmeJobArgs(t, local(script)))

	logs := readLogs(t, s.logDir)
	if !strings.Contains(logs, `msg="starting from savepoint"`) {
		t.Errorf("the AM did not log starting from the savepoint")
	}
	if !strings.Contains(logs, `msg="keyed state in pebble`) || !strings.Contains(logs, filepath.Join(base, "state")) {
		t.Errorf("no TaskManager logged keyed state in pebble under %s/state", base)
	}
}

// readLogs concatenates the files of a log directory.
func readLogs(t *testing.T, dir string) string {
	t.Helper()
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var b strings.Builder
	for _, e := range entries {
		data, err := os.ReadFile(filepath.Join(dir, e.Name()))
		if err != nil {
			t.Fatal(err)
		}
		b.Write(data)
	}
	return b.String()
}
