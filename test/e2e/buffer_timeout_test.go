package e2e

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/tidestream/tide/examples"
	"github.com/tidestream/tide/internal/testkit"
)

// TestBufferTimeoutSettings runs WordCount across two TaskManagers with
// execution.buffer-timeout 0 (every record sent at once), 5 ms and -1 (only full buffers),
// and with pipeline.operator-chaining false: every setting is read by the AM and the
// TaskManagers alike and commits exactly one running count per word, the last count of
// every word being its total.
func TestBufferTimeoutSettings(t *testing.T) {
	in := t.TempDir()
	var sb strings.Builder
	const lines, perLine, vocab = 3000, 5, 50
	for l := range lines {
		for w := range perLine {
			fmt.Fprintf(&sb, "w%d ", (l*perLine+w)%vocab)
		}
		sb.WriteByte('\n')
	}
	if err := os.WriteFile(filepath.Join(in, "part-0.txt"), []byte(sb.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, setting := range []string{"execution.buffer-timeout=0", "execution.buffer-timeout=5 ms",
		"execution.buffer-timeout=-1", "pipeline.operator-chaining=false"} {
		t.Run(setting, func(t *testing.T) {
			out := t.TempDir()
			dyn := append(reactive(t.TempDir(), "200 ms"), setting)
			c := startCluster(t, examples.WordCountName, []string{"--input", in, "--output", out}, 2, dyn)
			waitSucceeded(t, c, 5*time.Minute)
			got, err := examples.ReadCommittedOutput(out)
			if err != nil {
				t.Fatal(err)
			}
			if len(got) != lines*perLine {
				t.Fatalf("committed %d running counts, want one per word (%d)", len(got), lines*perLine)
			}
			final := map[string]bool{}
			for _, l := range got {
				final[l] = true
			}
			for w := range vocab {
				if want := fmt.Sprintf("(w%d,%d)", w, lines*perLine/vocab); !final[want] {
					t.Fatalf("no committed %s: the count of w%d did not reach its total", want, w)
				}
			}
		})
	}
}

// TestBufferTimeoutReload starts TopSpeedWindowing with bin/standalone-job.sh and two
// bin/taskmanager.sh TaskManagers with execution.buffer-timeout -1 in flink-conf.yaml, then
// edits the running AM's file: a value Flink does not accept (-5 ms) is refused with an error
// naming the key and what it accepts, and -1 stays in force; 0 is reloaded live, reaches both
// TaskManagers and is applied by their running subtasks, without a restart of the job.
func TestBufferTimeoutReload(t *testing.T) {
	const key = "execution.buffer-timeout"
	s := newScripted(t,
		"execution-mode: reactive",
		"taskmanager.numberOfTaskSlots: 1",
		"heartbeat.timeout: 30 min",
		key+": -1",
	)
	s.mustRun("standalone-job.sh", "start", "--job-classname", examples.TopSpeedWindowingName, "--cars", "8")
	s.mustRun("taskmanager.sh", "start")
	s.mustRun("taskmanager.sh", "start")
	id := s.jobID()
	d := s.waitRunning(id, 2)
	original := s.readConf()

	s.writeConf(strings.Replace(original, key+": -1", key+": -5 ms", 1))
	testkit.WaitFor(t, "the AM to refuse execution.buffer-timeout -5 ms", func() (bool, error) {
		return strings.Contains(s.amLog(), "configuration reload failed"), nil
	})
	if log := s.amLog(); !strings.Contains(log, key) || !strings.Contains(log, "is negative other than -1") {
		t.Errorf("the refusal does not name the key and the problem:\n%s", lastLines(log, 5))
	}
	if got, err := s.configInForce(key); err != nil || got != "-1" {
		t.Fatalf("%s in force after a refused value = %q, %v; want -1", key, got, err)
	}

	s.writeConf(strings.Replace(original, key+": -1", key+": 0", 1))
	testkit.WaitFor(t, "the AM to apply execution.buffer-timeout 0", func() (bool, error) {
		got, err := s.configInForce(key)
		return got == "0", err
	})
	testkit.WaitFor(t, "both TaskManagers' subtasks to apply execution.buffer-timeout 0", func() (bool, error) {
		logs := s.taskManagerLogs()
		if len(logs) != 2 {
			return false, fmt.Errorf("%d TaskManager logs", len(logs))
		}
		for name, log := range logs {
			if !strings.Contains(log, `msg="the AM reloaded execution.buffer-timeout"`) ||
				!strings.Contains(log, `msg="execution.buffer-timeout applied"`) {
				return false, fmt.Errorf("%s: not applied yet", name)
			}
		}
		return true, nil
	})
	now, err := s.job(id)
	if err != nil {
		t.Fatal(err)
	}
	if now.State != "RUNNING" || now.Attempt != d.Attempt {
		t.Fatalf("the reload restarted the job: %s in attempt %d, was RUNNING in attempt %d", now.State, now.Attempt, d.Attempt)
	}
}

// taskManagerLogs returns the log of every TaskManager started with bin/taskmanager.sh, by
// file name.
func (s *scripted) taskManagerLogs() map[string]string {
	matches, _ := filepath.Glob(filepath.Join(s.logDir, "tide-e2e-taskexecutor-*.log"))
	out := map[string]string{}
	for _, m := range matches {
		data, _ := os.ReadFile(m)
		out[filepath.Base(m)] = string(data)
	}
	return out
}
