package e2e

import (
	"context"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/tidestream/tide/internal/testkit"
	"github.com/tidestream/tide/storage"
	"github.com/tidestream/tide/test/hadoop/hadooptest"
)

// TestYARNOutputOnHDFS: CheckableCount on YARN with --output hdfs:///… (the README's command): the exactly-once file
// sink writes through the storage layer, a TaskManager killed mid-run restores the job from
// a checkpoint (pending files committed again, leftovers deleted), and the committed output
// on HDFS is the exact answer.
func TestYARNOutputOnHDFS(t *testing.T) {
	env := hadooptest.RequireYARN(t)
	rel := scratchName("yarn-output")
	// hdfs:///dir, as the README writes it: the namenode comes from fs.defaultFS in
	// $HADOOP_CONF_DIR/core-site.xml, in the client and in every container.
	out := "hdfs:///" + rel
	t.Setenv("HADOOP_CONF_DIR", env.ConfDir)
	root, err := storage.Open(context.Background(), env.URI+"/", storage.Options{User: currentUser()})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		for _, d := range []string{rel, rel + "-checkpoints"} {
			if err := root.Delete(context.Background(), d); err != nil {
				t.Errorf("deleting %s: %v", d, err)
			}
		}
		root.Close()
	})
	jobArgs := []string{"--records", "60000", "--keys", "13", "--rate", "3000", "--output", out}
	// Checkpoints under hdfs:/// too, as the README's command has them.
	run := startYarnRun(t, env, []string{"-Dstate.checkpoints.dir=hdfs:///" + rel + "-checkpoints"}, jobArgs)
	jid := run.jobID(t)
	tms := waitYarnRunning(t, run.track, jid, 2, nil)
	killTaskManager(t, run.app, tms[0].ID)
	waitYarnRunning(t, run.track, jid, 2, map[string]bool{tms[0].ID: true})
	run.wait(t, 3*time.Minute)
	testkit.CheckExactOutput(t, out, jobArgs)

	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	files, err := root.List(ctx, rel)
	if err != nil {
		t.Fatal(err)
	}
	var parts, hidden []string
	for _, f := range files {
		if strings.HasPrefix(f.Name, ".") {
			hidden = append(hidden, f.Name)
		} else {
			parts = append(parts, f.Name)
		}
	}
	t.Logf("committed part files on HDFS: %v; hidden: %v", parts, hidden)
	if len(parts) == 0 {
		t.Fatalf("no part files under %s", out)
	}
	// The job finished: its checkpoints went with it (the retention's default,
	// DELETE_ON_CANCELLATION, deletes them on success and cancellation).
	if ckpts, err := root.List(ctx, rel+"-checkpoints"); err != nil || len(ckpts) != 0 {
		t.Errorf("under hdfs:///%s-checkpoints after the job finished: %v, %v; want nothing", rel, ckpts, err)
	}
}

// TestYARNRefusesRelativeOutput: a relative --output is refused at submission, before
// anything reaches YARN.
func TestYARNRefusesRelativeOutput(t *testing.T) {
	env := hadooptest.RequireYARN(t)
	cmd := exec.Command(tideBin, yarnRunArgs(nil, []string{"--output", "out"})...)
	cmd.Env = hadoopEnv(env)
	b, err := cmd.CombinedOutput()
	if err == nil || !strings.Contains(string(b), `relative local output path "out"`) || strings.Contains(string(b), "Submitted application") {
		t.Fatalf("tide run = %v, output:\n%s\nwant a refusal before submission", err, b)
	}
}
