package e2e

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/tidestream/tide/examples"
	"github.com/tidestream/tide/internal/testkit"
)

// TestStandaloneInternalSecret runs the Flink-style scripts with the AM's RPC server bound
// to every interface (jobmanager.rpc.address: 0.0.0.0). Without a secret the AM refuses to
// start and says which key to set. With security.internal.secret-file in flink-conf.yaml the
// AM starts; a TaskManager without the secret, and one with another secret, exit at once
// with the AM's reason while the AM logs each refusal; TaskManagers started by
// bin/taskmanager.sh with the same configuration join and the job ends with the exact answer.
func TestStandaloneInternalSecret(t *testing.T) {
	out := t.TempDir()
	jobArgs := []string{"--records", "20000", "--keys", "5", "--rate", "5000", "--parallelism", "2", "--output", out}
	settings := []string{
		"jobmanager.rpc.address: 0.0.0.0",
		"taskmanager.numberOfTaskSlots: 1",
		"jobmanager.adaptive-scheduler.submission.resource-stabilization-timeout: 0 s",
		"state.checkpoints.dir: file://" + t.TempDir(),
		"execution.checkpointing.interval: 300 ms",
	}
	s := newScripted(t, settings...)
	start := append([]string{"start-foreground", "--job-classname", examples.CheckableCountName}, jobArgs...)
	got, err := s.run("standalone-job.sh", start...)
	if exitCode(err) != 1 || !strings.Contains(got, "security.internal.secret-file") || !strings.Contains(got, "not a loopback address") {
		t.Fatalf("AM on 0.0.0.0 without a secret: exit %v, want 1 and a message naming security.internal.secret-file:\n%s", err, got)
	}

	secretFile := filepath.Join(t.TempDir(), "internal-secret")
	if err := os.WriteFile(secretFile, []byte("standalone-e2e-secret-0123456789\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	s.writeConf(s.readConf() + "security.internal.secret-file: " + secretFile + "\n")
	s.mustRun("standalone-job.sh", append([]string{"start", "--job-classname", examples.CheckableCountName}, jobArgs...)...)
	id := s.jobID()

	// Intruders: started without the scripts' configuration, straight at the AM's port.
	emptyConf := t.TempDir()
	if err := os.WriteFile(filepath.Join(emptyConf, "flink-conf.yaml"), []byte("# an intruder's configuration\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name  string
		extra []string
		want  string
	}{
		{"no secret", nil, "sent no proof"},
		{"another secret", []string{"-Dsecurity.internal.secret=not-the-right-secret-0123"}, "does not match the AM's internal secret"},
	} {
		args := append([]string{"taskmanager", "--configDir", emptyConf, "-Djobmanager.rpc.address=127.0.0.1",
			"-Djobmanager.rpc.port=" + strconv.Itoa(s.rpcPort), "--connect-timeout", "30s"}, tc.extra...)
		got, err := tideCmd(t, tideBin, time.Minute, args...)
		if exitCode(err) != 1 || !strings.Contains(got, "AM rejected the TaskManager") || !strings.Contains(got, tc.want) {
			t.Fatalf("TaskManager with %s: exit %v, want 1 and %q:\n%s", tc.name, err, tc.want, got)
		}
		testkit.WaitFor(t, "the AM to log the refusal of the TaskManager with "+tc.name, func() (bool, error) {
			return strings.Contains(s.amLog(), tc.want), nil
		})
	}

	for i := 1; i <= 2; i++ {
		s.mustRun("taskmanager.sh", "start", "-Dtaskmanager.node-id=node-"+strconv.Itoa(i))
	}
	amPids := s.pids("standalonejob")
	if len(amPids) == 0 {
		t.Fatal("no AM pid recorded")
	}
	// The AM exits when the job has finished.
	testkit.WaitFor(t, "job "+id+" to finish and its AM to exit", func() (bool, error) {
		for _, pid := range amPids {
			if alive(pid) {
				return false, nil
			}
		}
		return true, nil
	})
	testkit.CheckExactOutput(t, out, jobArgs)
	if log := s.amLog(); !strings.Contains(log, "rpc_auth=true") {
		t.Errorf("the AM did not log that it authenticates TaskManagers:\n%s", log)
	}
}
