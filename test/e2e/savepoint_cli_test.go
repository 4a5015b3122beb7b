package e2e

import (
	"context"
	"errors"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/tidestream/tide/examples"
	"github.com/tidestream/tide/internal/testkit"
)

// TestSavepointOfAJobNotRunning: tide savepoint of a job still CREATED (its AM waits for a
// TaskManager) fails at once, exit 1, saying the state, why it waits and what to do;
// with --wait it waits for the job to run and then for the savepoint, which completes once
// a TaskManager joins. tide checkpoint behaves alike.
func TestSavepointOfAJobNotRunning(t *testing.T) {
	base := t.TempDir()
	s := newScripted(t,
		"execution.checkpointing.interval: 1 s",
		"state.checkpoints.dir: file://"+filepath.Join(base, "checkpoints"),
		"state.savepoints.dir: file://"+filepath.Join(base, "savepoints"),
	)
	s.mustRun("standalone-job.sh", "start", "--job-classname", examples.TopSpeedWindowingName)
	testkit.WaitFor(t, "the job listed CREATED", func() (bool, error) {
		out, err := s.tide("list")
		return err == nil && regexp.MustCompile(`TopSpeedWindowing\s+CREATED`).MatchString(out), errors.New(out)
	})
	for _, cmd := range []string{"savepoint", "checkpoint"} {
		start := time.Now()
		out, err := s.tide(cmd, examples.TopSpeedWindowingName)
		if code := exitCode(err); code != 1 {
			t.Fatalf("tide %s of a CREATED job: exit %d, want 1:\n%s", cmd, code, out)
		}
		t.Logf("tide %s of a CREATED job:\n%s", cmd, out)
		for _, want := range []string{"is CREATED", "SLOTS_MISSING", "needs it RUNNING", "--wait"} {
			if !strings.Contains(out, want) {
				t.Errorf("tide %s of a CREATED job says no %q:\n%s", cmd, want, out)
			}
		}
		if strings.Contains(out, "triggered") {
			t.Errorf("tide %s triggered something for a job that is not running:\n%s", cmd, out)
		}
		if took := time.Since(start); took > 30*time.Second {
			t.Errorf("tide %s of a CREATED job took %s to fail", cmd, took)
		}
	}

	ctx, cancel := context.WithTimeout(context.Background(), 4*time.Minute)
	defer cancel()
	waiting := exec.CommandContext(ctx, filepath.Join(s.bin, "tide"), "savepoint", examples.TopSpeedWindowingName, "--wait", "3m", "-m", s.restAddr)
	waiting.Env = s.env()
	out := &lockedBuffer{} // read below while the process still writes it
	waiting.Stdout, waiting.Stderr = out, out
	if err := waiting.Start(); err != nil {
		t.Fatal(err)
	}
	testkit.WaitFor(t, "tide savepoint --wait to say it waits", func() (bool, error) {
		return strings.Contains(out.String(), "waiting up to"), errors.New(out.String())
	})
	s.mustRun("taskmanager.sh", "start")
	err := waiting.Wait()
	if code := exitCode(err); code != 0 {
		t.Fatalf("tide savepoint --wait: exit %d:\n%s", code, out.String())
	}
	if !regexp.MustCompile(`(?s)is CREATED.*waiting up to.*completed: file://` + regexp.QuoteMeta(base) + `/savepoints/savepoint-\S+`).MatchString(out.String()) {
		t.Fatalf("tide savepoint --wait printed:\n%s", out.String())
	}
	t.Logf("tide savepoint --wait:\n%s", out.String())
}

// TestSavepointWithoutCheckpointStorage: without state.checkpoints.dir the AM refuses a
// savepoint even with a target directory, in either format, and says why: a NATIVE one is
// a copy of a checkpoint; a CANONICAL one goes to the target, but the checkpoint
// coordinator that takes it runs only with checkpoint storage.
func TestSavepointWithoutCheckpointStorage(t *testing.T) {
	target := "file://" + t.TempDir()
	s := newScripted(t, "state.savepoints.allowed-dirs: "+target)
	s.mustRun("standalone-job.sh", "start", "--job-classname", examples.TopSpeedWindowingName)
	s.mustRun("taskmanager.sh", "start")
	testkit.WaitFor(t, "the job RUNNING", func() (bool, error) {
		out, err := s.tide("list")
		return err == nil && regexp.MustCompile(`TopSpeedWindowing\s+RUNNING`).MatchString(out), errors.New(out)
	})
	for _, format := range []string{"CANONICAL", "NATIVE"} {
		out, err := s.tide("savepoint", examples.TopSpeedWindowingName, "--dir", target+"/sp", "--formatType", format)
		if code := exitCode(err); code != 1 {
			t.Fatalf("tide savepoint --formatType %s without checkpoint storage: exit %d, want 1:\n%s", format, code, out)
		}
		t.Logf("tide savepoint --formatType %s without checkpoint storage:\n%s", format, out)
		for _, want := range []string{"checkpointing is off", "state.checkpoints.dir", "needs it even with a target directory", "a " + format + " savepoint"} {
			if !strings.Contains(out, want) {
				t.Errorf("tide savepoint --formatType %s without checkpoint storage says no %q:\n%s", format, want, out)
			}
		}
	}
}
