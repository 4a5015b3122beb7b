package e2e

import (
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/tidestream/tide/internal/testkit"
)

// TestOperatingReadmeCommands runs the README's "Operating a job" example as written: its
// yaml lines go into a copy of conf/flink-conf.yaml (beside this cluster's ports), its sh
// block runs from the repository's top folder with the bin/ scripts, and only /tmp/tide
// and /backups are replaced by temporary directories. Where the block says to edit
// conf/flink-conf.yaml while the job runs, the test makes that edit and waits for the AM
// to log it applied, then runs the rest. Every command must succeed; the test checks what
// they printed: the job listed, its vertices, both TaskManagers, the rescale to 2..4, a
// checkpoint and a savepoint under the given directory, the blocked node, the stop with its
// savepoint (whose result the AM keeps readable after the job ended).
func TestOperatingReadmeCommands(t *testing.T) {
	yaml, script := readmeConfAndScript(t, "## Operating a job",
		"bin/standalone-job.sh start", "bin/tide rescale", "bin/tide checkpoint", "bin/tide savepoint",
		"bin/tide blocklist add", "bin/tide stop", "bin/taskmanager.sh stop-all")
	const editMark = "# Reconfigure live:"
	before, after, ok := strings.Cut(script, editMark)
	if !ok {
		t.Fatalf("the README's operating block has no %q step:\n%s", editMark, script)
	}
	after = editMark + after
	edit := regexp.MustCompile(`(?m)^#\s+(jobmanager\.adaptive-scheduler\.min-parallelism-increase): (\S+)$`).FindStringSubmatch(after)
	if edit == nil {
		t.Fatalf("the README's reconfigure step names no key to edit:\n%s", after)
	}
	base := t.TempDir()
	local := func(s string) string {
		s = strings.ReplaceAll(s, "/tmp/tide", base)
		return strings.ReplaceAll(s, "/backups", filepath.Join(base, "backups"))
	}
	settings := strings.Split(strings.TrimSpace(local(yaml)), "\n")
	s := newScripted(t, settings...)
	root := repoRoot(t)

	out := runScript(t, root, s.env(), local(before), 5*time.Minute)
	t.Logf("README operating commands, up to the live edit:\n%s", out)
	for _, want := range []*regexp.Regexp{
		regexp.MustCompile(`JOB ID\s+NAME\s+STATUS`),
		regexp.MustCompile(`(?m)^\S+\s+TopSpeedWindowing\s+\S+`),
		regexp.MustCompile(`(?m)^ID\s+NODE\s+SLOTS\s+FREE`),
		regexp.MustCompile(`completed: file://` + regexp.QuoteMeta(base) + `/backups/sp/savepoint-\S+`),
	} {
		if !want.MatchString(out) {
			t.Errorf("the README's operating commands printed nothing matching %s", want)
		}
	}
	if rows := regexp.MustCompile(`(?m)^\S+\s+\S+\s+1\s+[01]\s+\S+ ago\s+no$`).FindAllString(out, -1); len(rows) != 2 {
		t.Errorf("tide taskmanagers listed %d TaskManagers with one slot, want the 2 started", len(rows))
	}
	var st jobStatusJSON
	if raw, err := s.tide("status", "TopSpeedWindowing", "--json"); err != nil || json.Unmarshal([]byte(raw), &st) != nil {
		t.Fatalf("tide status --json: %v\n%s", err, raw)
	}
	found := false
	for _, v := range st.Job.Vertices {
		if v.ID == "top_speed" {
			found = true
			if v.Parallelism < 2 || v.Parallelism > 4 {
				t.Errorf("vertex top_speed at parallelism %d after tide rescale --parallelism 2..4 --wait", v.Parallelism)
			}
		}
	}
	if !found {
		t.Errorf("tide status lists no vertex top_speed: %+v", st.Job.Vertices)
	}

	// The live edit, as an editor makes it.
	s.writeConf(s.readConf() + edit[1] + ": " + edit[2] + "\n")
	applied := regexp.MustCompile(`msg="configuration key reloaded" .*key=` + regexp.QuoteMeta(edit[1]) + ` old=\S+ new=` + regexp.QuoteMeta(edit[2]))
	testkit.WaitFor(t, "the AM to apply the edited "+edit[1], func() (bool, error) {
		return applied.MatchString(readLogs(t, s.logDir)), nil
	})

	out = runScript(t, root, s.env(), local(after), 3*time.Minute)
	t.Logf("README operating commands, after the live edit:\n%s", out)
	for _, want := range []string{"node-3", "bad disk", "is CANCELED."} {
		if !strings.Contains(out, want) {
			t.Errorf("the README's operating commands printed no %q", want)
		}
	}
	if _, err := os.Stat(filepath.Join(base, "backups", "sp")); err != nil {
		t.Errorf("no savepoint directory: %v", err)
	}
	stopped := regexp.MustCompile(`Savepoint completed\. Path: file://(` + regexp.QuoteMeta(base) + `/backups/stop/savepoint-\S+)`).FindStringSubmatch(out)
	if stopped == nil {
		t.Fatalf("tide stop printed no savepoint path under %s/backups/stop", base)
	}
	if _, err := os.Stat(filepath.Join(stopped[1], "_metadata")); err != nil {
		t.Errorf("the savepoint tide stop printed has no _metadata: %v", err)
	}
}
