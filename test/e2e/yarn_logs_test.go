package e2e

import (
	"context"
	"os/exec"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/tidestream/tide/storage"
	"github.com/tidestream/tide/test/hadoop/hadooptest"
)

// TestYARNFailedAMSaysWhy: an AM that cannot start (its REST server cannot bind
// rest.bind-address) fails both attempts. tide run shows each attempt's last error and the
// tail of the last attempt's jobmanager.log, read through the NodeManager's log endpoint,
// not only YARN's diagnostics with an empty prelaunch.err; tide logs prints the AM's logs,
// with --container only that container's, and --follow on the ended application prints them
// and returns with the final state.
func TestYARNFailedAMSaysWhy(t *testing.T) {
	env := hadooptest.RequireYARN(t)
	args := yarnRunArgs([]string{"-Drest.bind-address=203.0.113.1"}, []string{"--records", "1000", "--keys", "3", "--output", "hdfs:///tide-test/never-written"})
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, tideBin, args...)
	cmd.Env = hadoopEnv(env)
	b, err := cmd.CombinedOutput()
	out := string(b)
	app := ""
	if m := submittedRE.FindStringSubmatch(out); m != nil {
		app = m[1]
		t.Cleanup(func() { removeStaging(t, out, app) })
	}
	if err == nil || app == "" {
		t.Fatalf("tide run of an AM that cannot bind: err %v, want a failure after submission:\n%s", err, out)
	}
	t.Logf("tide run:\n%s", out)
	const cause = "listen tcp 203.0.113.1:0"
	for _, want := range []string{
		"AM attempt 1 (container_", "AM attempt 2 (container_", "last error: tide: rest.bind-address",
		"---- last lines of jobmanager.log of attempt 2", "  tide: rest.bind-address/rest.port 203.0.113.1:0: listen tcp",
		"---- all of it: tide logs " + app + " --container container_",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("tide run's output lacks %q", want)
		}
	}

	logs := tideYARN(t, env, "logs", app)
	if !strings.Contains(logs, ": jobmanager.log <==") || strings.Count(logs, cause) < 2 {
		t.Errorf("tide logs %s: want both attempts' jobmanager.log with %q:\n%s", app, cause, logs)
	}
	am2 := regexp.MustCompile(`tide logs \S+ --container (container_\S+)`).FindStringSubmatch(out)[1]
	one := tideYARN(t, env, "logs", app, "--container", am2)
	if strings.Count(one, cause) != 1 || !strings.Contains(one, am2) {
		t.Errorf("tide logs %s --container %s: want that container's log only:\n%s", app, am2, one)
	}
	follow := tideYARN(t, env, "logs", app, "--follow")
	if !strings.Contains(follow, cause) || !strings.Contains(follow, app+" FAILED (final status FAILED)") {
		t.Errorf("tide logs %s --follow on the failed application:\n%s", app, follow)
	}
}

// tideYARN runs a tide command against the mini-cluster and returns its output; it must succeed.
func tideYARN(t *testing.T, env *hadooptest.Env, args ...string) string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, tideBin, args...)
	cmd.Env = hadoopEnv(env)
	b, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("tide %s: %v\n%s", strings.Join(args, " "), err, b)
	}
	return string(b)
}

// removeStaging deletes the staging directory tide run named in out (a failed application keeps it).
func removeStaging(t *testing.T, out, app string) {
	m := stagingRE.FindStringSubmatch(out)
	if m == nil {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	st, err := storage.Open(ctx, strings.TrimSuffix(m[1], "/"+app), storage.Options{User: currentUser()})
	if err != nil {
		t.Logf("staging directory %s stays: %v", m[1], err)
		return
	}
	defer st.Close()
	if err := st.Delete(ctx, app); err != nil {
		t.Logf("staging directory %s stays: %v", m[1], err)
	}
}
