package e2e

import (
	"context"
	"os/exec"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/tidestream/tide/internal/testkit"
	"github.com/tidestream/tide/storage"
	"github.com/tidestream/tide/test/hadoop/hadooptest"
)

// TestYARNClientByApplicationID: client commands find the AM by application id through the
// ResourceManager (-m yarn-application:<id>, -Dyarn.application.id=<id>), before
// and after the AM moves to a second attempt; tide run prints the new AM's address when
// attempt 2 starts; tide list --target yarn lists the application; tide cancel APPLICATION_ID
// cancels its job, which keeps its latest checkpoint under RETAIN_ON_CANCELLATION and says
// where (in the default checkpoint directory, inside the staging directory, which then
// stays); tide run's last line says how the application ended, and a client command on the
// ended application says so.
func TestYARNClientByApplicationID(t *testing.T) {
	env := hadooptest.RequireYARN(t)
	jobArgs := []string{"--records", "1000000", "--keys", "7", "--rate", "2000", "--output", t.TempDir()}
	// Checkpoints in the default directory, inside the staging directory: it goes when the
	// application is cancelled, unless it holds the checkpoint the job keeps.
	r := startYarnRun(t, env, []string{"-Dyarn.application-attempts=2",
		"-Dexecution.checkpointing.externalized-checkpoint-retention=RETAIN_ON_CANCELLATION"}, jobArgs)
	t.Cleanup(func() { removeStaging(t, r.out.String(), r.app) })
	staging := stagingRE.FindStringSubmatch(r.out.String())
	if staging == nil {
		t.Fatalf("tide run does not name the staging directory:\n%s", r.out.String())
	}
	jid := r.jobID(t)
	waitYarnRunning(t, r.track, jid, 2, nil)

	for _, args := range [][]string{
		{"list", "-m", "yarn-application:" + r.app},
		{"list", "-Dyarn.application.id=" + r.app},
	} {
		if out := tideYARN(t, env, args...); !strings.Contains(out, jid) {
			t.Errorf("tide %s: no job %s:\n%s", strings.Join(args, " "), jid, out)
		}
	}
	apps := tideYARN(t, env, "list", "--target", "yarn")
	if !strings.Contains(apps, r.app) || !strings.Contains(apps, "/proxy/"+r.app+"/") {
		t.Errorf("tide list --target yarn: no running %s with its proxy URL:\n%s", r.app, apps)
	}
	for _, l := range strings.Split(apps, "\n") {
		if strings.HasPrefix(l, r.app) && !strings.Contains(l, "RUNNING") {
			t.Errorf("tide list --target yarn: %q, want %s RUNNING", l, r.app)
		}
	}

	// The cancelled job keeps its latest checkpoint: there must be one before the AM goes
	// (CI once killed attempt 1 6 ms after RUNNING, and no checkpoint was ever kept).
	waitYarnCheckpoint(t, r.track, jid)
	killAM(t, r.app)
	track2 := waitAttempt2(t, env, r.app, r.track)
	testkit.WaitFor(t, "tide run printing attempt 2's AM", func() (bool, error) {
		return strings.Contains(r.out.String(), r.app+": AM attempt 2 started at "+track2), nil
	})
	testkit.WaitFor(t, "the job by application id after the failover", func() (bool, error) {
		cmd := exec.Command(tideBin, "list", "-m", "yarn-application:"+r.app)
		cmd.Env = hadoopEnv(env)
		b, err := cmd.CombinedOutput()
		return err == nil && strings.Contains(string(b), "RUNNING"), err
	})

	tideYARN(t, env, "cancel", r.app, "--wait", "60s")
	select {
	case <-r.done:
	case <-time.After(2 * time.Minute):
		t.Fatal("tide run did not end after tide cancel")
	}
	<-r.drained
	out := strings.TrimSpace(r.out.String())
	lines := strings.Split(out, "\n")
	if last := lines[len(lines)-1]; !strings.Contains(last, r.app) || !strings.Contains(last, "KILLED") || strings.Contains(last, "RUNNING") {
		t.Errorf("tide run's last line %q, want %s's end with final status KILLED", last, r.app)
	}
	keptRE := regexp.MustCompile(`latest checkpoint kept at (\S+/` + jid + `/chk-\d+) \(RETAIN_ON_CANCELLATION`)
	m := keptRE.FindStringSubmatch(out)
	if m == nil {
		t.Fatalf("tide run does not say where the cancelled job's checkpoint is kept:\n%s", out)
	}
	if !strings.HasPrefix(m[1], staging[1]+"/") {
		t.Errorf("the kept checkpoint %s is not in the staging directory %s (the default checkpoint directory)", m[1], staging[1])
	}
	if !strings.Contains(out, "Staging directory "+staging[1]+" kept (APP_KILLED): it holds the checkpoint the job keeps") {
		t.Errorf("tide run does not say the staging directory stays for the kept checkpoint:\n%s", out)
	}
	st, err := storage.Open(context.Background(), staging[1], storage.Options{User: currentUser()})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	if _, err := st.Stat(context.Background(), strings.TrimPrefix(m[1], staging[1]+"/")+"/_metadata"); err != nil {
		t.Errorf("the kept checkpoint %s after the application ended: %v", m[1], err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, tideBin, "list", "-m", "yarn-application:"+r.app)
	cmd.Env = hadoopEnv(env)
	b, err := cmd.CombinedOutput()
	if err == nil || !strings.Contains(string(b), "its AM is gone") {
		t.Errorf("tide list -m yarn-application:%s after the end: %v\n%s", r.app, err, b)
	}
}
