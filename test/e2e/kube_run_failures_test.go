package e2e

import (
	"fmt"
	"os/exec"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/tidestream/tide/internal/testkit"
)

// TestKubeRunPrintsFailures: tide run --target kubernetes-application, following the job
// to its end, says why the job restarted when a TaskManager's process died (the AM's
// newest failure: the TaskManager lost), and the job still ends with its exact answer.
func TestKubeRunPrintsFailures(t *testing.T) {
	k := newKubeApp(t)
	ckpt, out := t.TempDir(), t.TempDir()
	jobArgs := []string{"--records", "2500", "--keys", "3", "--rate", "100", "--output", out}
	args := append([]string{"run", "--target", "kubernetes-application"}, k.checkableCountArgs(ckpt, 1)...)
	cmd := exec.Command(tideBin, append(append(args, "--"), jobArgs...)...)
	cmd.Env = k.procEnv
	runOut := &lockedBuffer{}
	cmd.Stdout, cmd.Stderr = runOut, runOut
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	done := make(chan struct{})
	var runErr error
	go func() { runErr = cmd.Wait(); close(done) }()
	t.Cleanup(func() {
		_ = cmd.Process.Kill()
		<-done
	})
	testkit.WaitFor(t, "tide run to say the job runs", func() (bool, error) {
		if m := kubeSubmittedRE.FindStringSubmatch(runOut.String()); m != nil {
			k.id = m[1]
		}
		return strings.Contains(runOut.String(), "Job RUNNING"), fmt.Errorf("output so far:\n%s", runOut)
	})
	pods := k.waitTMPods("the TaskManager pod", podCount(1))
	if err := k.env.KillContainer(k.ns, pods[0].Name); err != nil {
		t.Fatal(err)
	}
	lost := regexp.MustCompile(`(?m)^` + regexp.QuoteMeta(k.id) + `: failure: .*\(attempt \d+, on [^)]+\): task manager \S+ lost`)
	testkit.WaitFor(t, "tide run to print the lost TaskManager as the failure", func() (bool, error) {
		return lost.MatchString(runOut.String()), fmt.Errorf("output so far:\n%s", runOut)
	})
	select {
	case <-done:
		if runErr != nil {
			t.Fatalf("tide run: %v\n%s", runErr, runOut)
		}
	case <-time.After(5 * time.Minute):
		t.Fatalf("the job did not end:\n%s", runOut)
	}
	t.Logf("tide run:\n%s", runOut)
	testkit.CheckExactOutput(t, out, jobArgs)
}
