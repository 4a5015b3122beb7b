package e2e

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/tidestream/tide/internal/testkit"
	"github.com/tidestream/tide/storage"
	"github.com/tidestream/tide/test/hadoop/hadooptest"
	"github.com/tidestream/tide/yarn/yarnpb"
)

var stopWithRE = regexp.MustCompile(`Stop it with: (tide cancel (application_\d+_\d+))`)

// TestYARNInterrupt: Ctrl-C on an attached tide run leaves the application running and
// prints the command that stops it, tide cancel APPLICATION_ID (the AM found through the
// ResourceManager's web proxy), which works (the job is cancelled, the application
// ends KILLED and the AM removes the staging directory); with --cancel-on-exit, Ctrl-C
// kills the application and tide run removes the staging directory.
func TestYARNInterrupt(t *testing.T) {
	env := hadooptest.RequireYARN(t)
	jobArgs := []string{"--records", "1000000", "--keys", "7", "--rate", "2000"}
	t.Run("keeps running", func(t *testing.T) {
		r := startYarnRun(t, env, nil, append(jobArgs, "--output", t.TempDir()))
		out := interruptRun(t, r)
		if !strings.Contains(out, "Interrupted: "+r.app+" keeps running") {
			t.Fatalf("tide run did not say the application goes on:\n%s", out)
		}
		m := stopWithRE.FindStringSubmatch(out)
		if m == nil {
			t.Fatalf("tide run printed no command to stop the application:\n%s", out)
		}
		if state := appState(t, env, r.app); state != yarnpb.YarnApplicationStateProto_RUNNING {
			t.Fatalf("%s is %v after the interrupt, want RUNNING", r.app, state)
		}
		if m[2] != r.app {
			t.Fatalf("tide run says to cancel %s, want its application %s", m[2], r.app)
		}
		words := strings.Fields(m[1])
		cancel := exec.Command(tideBin, append(words[1:], "--wait", "60s")...)
		cancel.Env = hadoopEnv(env)
		if b, err := cancel.CombinedOutput(); err != nil {
			t.Fatalf("%s: %v\n%s", m[1], err, b)
		}
		testkit.WaitFor(t, r.app+" KILLED", func() (bool, error) {
			s := appState(t, env, r.app)
			return s == yarnpb.YarnApplicationStateProto_KILLED || s == yarnpb.YarnApplicationStateProto_FINISHED, errors.New(s.String())
		})
		waitStagingGone(t, r)
	})
	t.Run("cancel-on-exit", func(t *testing.T) {
		r := startYarnRun(t, env, []string{"--cancel-on-exit"}, append(jobArgs, "--output", t.TempDir()))
		out := interruptRun(t, r)
		if !strings.Contains(out, "Killed "+r.app+"; staging directory") {
			t.Fatalf("tide run --cancel-on-exit did not kill the application:\n%s", out)
		}
		if state := appState(t, env, r.app); state != yarnpb.YarnApplicationStateProto_KILLED {
			t.Fatalf("%s is %v after the interrupt, want KILLED", r.app, state)
		}
		waitStagingGone(t, r)
		// YARN reports KILLED before its containers have stopped; one that writes late
		// (the AM's last state, a snapshot upload) must not bring the directory back.
		time.Sleep(5 * time.Second)
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		dir, st := openStaging(ctx, t, r)
		if fi, err := st.Stat(ctx, r.app); !errors.Is(err, storage.ErrNotFound) {
			t.Fatalf("staging directory %s is back 5 s after tide run removed it (modified %s, err %v)", dir, fi.ModTime.Format(time.RFC3339Nano), err)
		}
	})
	t.Run("cancel-on-exit keeps a retained checkpoint", func(t *testing.T) {
		// Killing cancels the job; under RETAIN_ON_CANCELLATION its latest checkpoint, in
		// the default directory inside the staging directory, must outlive the kill.
		r := startYarnRun(t, env, []string{"--cancel-on-exit",
			"-Dexecution.checkpointing.externalized-checkpoint-retention=RETAIN_ON_CANCELLATION"}, append(jobArgs, "--output", t.TempDir()))
		t.Cleanup(func() { removeStaging(t, r.out.String(), r.app) })
		jid := r.jobID(t)
		waitYarnCheckpoint(t, r.track, jid)
		out := interruptRun(t, r)
		m := regexp.MustCompile(`Killed ` + r.app + `; staging directory \S+ kept: it holds the job's latest checkpoint (\S+/` + jid + `/chk-\d+) \(RETAIN_ON_CANCELLATION; resume with --fromSavepoint `).FindStringSubmatch(out)
		if m == nil {
			t.Fatalf("tide run --cancel-on-exit does not say it kept the job's checkpoint:\n%s", out)
		}
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		_, st := openStaging(ctx, t, r)
		if _, err := st.Stat(ctx, strings.TrimPrefix(m[1], st.URI()+"/")+"/_metadata"); err != nil {
			t.Fatalf("the kept checkpoint %s after the kill: %v", m[1], err)
		}
	})
}

// interruptRun sends tide run SIGINT (Ctrl-C) and returns its output once it exited.
func interruptRun(t *testing.T, r *yarnRun) string {
	t.Helper()
	if err := r.cmd.Process.Signal(os.Interrupt); err != nil {
		t.Fatal(err)
	}
	select {
	case err := <-r.done:
		if err != nil {
			t.Fatalf("tide run after Ctrl-C: %v\n%s", err, r.out.String())
		}
	case <-time.After(2 * time.Minute):
		t.Fatal("tide run did not exit after Ctrl-C")
	}
	<-r.drained
	return r.out.String()
}

func appState(t *testing.T, env *hadooptest.Env, app string) yarnpb.YarnApplicationStateProto {
	t.Helper()
	rep, err := appReport(env, app)
	if err != nil {
		t.Fatal(err)
	}
	return rep.GetYarnApplicationState()
}

// waitStagingGone waits until the staging directory tide run named is gone.
func waitStagingGone(t *testing.T, r *yarnRun) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	dir, st := openStaging(ctx, t, r)
	testkit.WaitFor(t, "staging directory "+dir+" gone", func() (bool, error) {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second) // each check its own
		defer cancel()
		fi, err := st.Stat(ctx, r.app)
		if err == nil {
			err = fmt.Errorf("still there (modified %s)", fi.ModTime.Format(time.RFC3339Nano))
		}
		return errors.Is(err, storage.ErrNotFound), err
	})
}
