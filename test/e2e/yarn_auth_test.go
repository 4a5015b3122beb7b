package e2e

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/tidestream/tide/internal/testkit"
	"github.com/tidestream/tide/test/hadoop/hadooptest"
)

// TestYARNInternalAuth runs CheckableCount on YARN with the AM's RPC server bound to every
// interface (0.0.0.0), so the AM refuses to start without the internal secret: tide run makes
// one, the AM gets it in its container's credentials and hands it to every TaskManager the
// same way. The job must run on two TaskManagers with the exact answer, every container must
// log that it authenticates, and no secret key may appear on a container's command line or in
// its environment.
func TestYARNInternalAuth(t *testing.T) {
	env := hadooptest.RequireYARN(t)
	out := t.TempDir()
	jobArgs := []string{"--records", "40000", "--keys", "7", "--rate", "4000", "--output", out}
	r := startYarnRun(t, env, []string{"-Djobmanager.rpc.address=0.0.0.0"}, jobArgs)
	jid := r.jobID(t)
	waitYarnRunning(t, r.track, jid, 2, nil)

	// While the containers run: no secret on a command line or in an environment.
	attempt := "container_" + strings.TrimPrefix(r.app, "application_") + "_"
	seen := 0
	for _, p := range testkit.Processes() {
		if c, _ := p.Env("CONTAINER_ID"); !strings.HasPrefix(c, attempt) {
			continue
		}
		seen++
		for _, s := range append(p.Args, p.Environ()...) {
			if strings.Contains(s, "security.internal.secret") || strings.Contains(s, "TIDE_INTERNAL_SECRET") {
				t.Fatalf("a container process of %s carries the secret in its command line or environment", r.app)
			}
		}
	}
	if seen < 3 {
		t.Fatalf("found %d container processes of %s; want the AM and two TaskManagers", seen, r.app)
	}

	r.wait(t, 3*time.Minute)
	testkit.CheckExactOutput(t, out, jobArgs)

	am, tms := 0, 0
	amAuth := regexp.MustCompile(`AM started.*rpc=(0\.0\.0\.0|\[::\]):\d+.*rpc_auth=true`)
	for _, f := range containerLogs(env, r.app) {
		if !strings.HasSuffix(f, ".log") {
			continue // the localized files (the tide binary itself) are listed too
		}
		b, _ := os.ReadFile(f)
		text := string(b)
		switch filepath.Base(f) {
		case "jobmanager.log":
			if amAuth.MatchString(text) && strings.Contains(text, "the YARN container's credentials") {
				am++
			}
		case "taskmanager.log":
			if strings.Contains(text, "internal_auth=true") && strings.Contains(text, "the YARN container's credentials") {
				tms++
			}
		}
		if strings.Contains(text, "refusing an unauthenticated") {
			t.Errorf("%s: a connection was refused:\n%s", f, text)
		}
	}
	if am != 1 || tms < 2 {
		t.Fatalf("%d AM logs bound off loopback with rpc_auth=true (want 1) and %d TaskManager logs with internal_auth=true (want >= 2)", am, tms)
	}
}
