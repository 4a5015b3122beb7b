package e2e

import (
	"context"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/tidestream/tide/am"
	"github.com/tidestream/tide/api"
	"github.com/tidestream/tide/examples"
	"github.com/tidestream/tide/internal/testkit"
	"github.com/tidestream/tide/standalone"
)

// TestAMFailoverDeletesPartialSavepoint: the AM SIGKILLs itself mid-savepoint, before
// _metadata, leaving a partial savepoint under state.savepoints.dir, far from the job's
// checkpoints: CANONICAL (am.CrashPointEnv savepoint-acknowledged:1: one subtask wrote its
// state into the directory) and NATIVE (savepoint-copied:1: the AM's copy of the
// checkpoint wrote one file). The next AM finds the directory in the persisted AM state,
// deletes it, adopts the running subtasks, and the job's output is exact.
func TestAMFailoverDeletesPartialSavepoint(t *testing.T) {
	for _, tc := range []struct{ format, crashAt string }{
		{"CANONICAL", "savepoint-acknowledged:1"},
		{"NATIVE", "savepoint-copied:1"},
	} {
		t.Run(tc.format, func(t *testing.T) { testAMFailoverDeletesPartialSavepoint(t, tc.format, tc.crashAt) })
	}
}

func testAMFailoverDeletesPartialSavepoint(t *testing.T, format, crashAt string) {
	ckpt, out, sp := t.TempDir(), t.TempDir(), t.TempDir()
	dyn := append(adoptingReactive(ckpt), "state.savepoints.dir=file://"+sp)
	args := []string{"--records", "40000", "--keys", "7", "--rate", "2000", "--output", out}
	r := testkit.StartAMRestartCluster(t, tideBin, standalone.LocalOptions{Dynamic: dyn, JobName: examples.CheckableCountName,
		JobArgs: args, TaskManagers: 2, Env: []string{am.CrashPointEnv + "=" + crashAt}})
	c := r.C
	jid := jobID(t, c)
	d := waitRunningAt(t, c, jid, 2)
	waitCheckpointIn(t, c, jid, d.Attempt)

	client, err := api.NewClient(api.Config{Address: c.RESTAddress()})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	if _, err := client.TriggerSavepoint(ctx, jid, api.SavepointTriggerRequest{FormatType: format}); err != nil {
		t.Fatalf("POST /jobs/%s/savepoints: %v", jid, err)
	}
	select {
	case <-c.AMDone():
	case <-time.After(3 * time.Minute):
		t.Fatalf("the AM did not reach its crash point (%s) within 3 minutes (logs in %s)", crashAt, c.LogDir())
	}
	dirs, err := filepath.Glob(filepath.Join(sp, "savepoint-*"))
	if err != nil || len(dirs) != 1 {
		t.Fatalf("savepoint directories after the crash: %v (%v); want one", dirs, err)
	}
	partial := dirs[0]
	if _, err := os.Stat(filepath.Join(partial, "_metadata")); err == nil {
		t.Fatalf("the savepoint %s has _metadata though the AM died before writing it", partial)
	}
	files := filesUnder(t, partial)
	if len(files) == 0 {
		t.Fatalf("the partial savepoint %s holds no file: the crash point missed the moment", partial)
	}
	t.Logf("the AM died mid-savepoint: %s holds %v and no _metadata", partial, files)

	am2 := r.Start(t, 2)
	after := waitRunningAt(t, c, jid, 2)
	if after.Attempt != d.Attempt || after.RestoreFrom != 0 {
		t.Fatalf("AM 2: attempt %d restored from checkpoint %d; want attempt %d adopted (logs in %s)", after.Attempt, after.RestoreFrom, d.Attempt, c.LogDir())
	}
	testkit.WaitFor(t, "the partial savepoint "+partial+" deleted", func() (bool, error) {
		_, err := os.Stat(partial)
		return os.IsNotExist(err), err
	})
	am2.Wait(t, 4*time.Minute)
	testkit.CheckExactOutput(t, out, args)
	if !am2.Logged(t, "deleted the partial directory of a savepoint the lost AM left in flight") {
		t.Errorf("AM 2 did not log deleting the partial savepoint (log %s)", am2.Log)
	}
	if _, err := os.Stat(partial); !os.IsNotExist(err) {
		t.Errorf("the partial savepoint %s came back after the job ended: %v", partial, err)
	}
}

// filesUnder lists the files under dir, relative to it.
func filesUnder(t *testing.T, dir string) []string {
	t.Helper()
	var out []string
	err := filepath.WalkDir(dir, func(p string, e os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if !e.IsDir() {
			rel, _ := filepath.Rel(dir, p)
			out = append(out, rel)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}
