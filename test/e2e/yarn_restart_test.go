package e2e

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/tidestream/tide/examples"
	"github.com/tidestream/tide/test/hadoop/hadooptest"
	"github.com/tidestream/tide/yarn"
)

// TestYARNAMRestart kills the AM container after a checkpoint: YARN starts attempt 2,
// which recovers the job from the newest checkpoint on HDFS, and the output is exact.
func TestYARNAMRestart(t *testing.T) {
	env := hadooptest.RequireYARN(t)
	f, err := os.Open(filepath.Join(env.ConfDir, "yarn-site.xml"))
	if err != nil {
		t.Fatal(err)
	}
	site, err := yarn.ParseSite(f)
	f.Close()
	if err != nil {
		t.Fatal(err)
	}
	if n, _ := strconv.Atoi(site["yarn.resourcemanager.am.max-attempts"]); n < 2 {
		t.Skipf("the mini-cluster caps AM attempts at yarn.resourcemanager.am.max-attempts=%q: no second attempt possible", site["yarn.resourcemanager.am.max-attempts"])
	}
	out := t.TempDir()
	jobArgs := []string{"--records", "120000", "--keys", "7", "--rate", "4000", "--output", out}
	r := startYarnRun(t, env, []string{"-Dyarn.application-attempts=2"}, jobArgs)
	var ov struct {
		Jobs []struct {
			JID string `json:"jid"`
		} `json:"jobs"`
	}
	if err := getJSON(r.track+"/jobs/overview", &ov); err != nil || len(ov.Jobs) != 1 {
		t.Fatalf("overview: %v %+v", err, ov)
	}
	jid := ov.Jobs[0].JID
	waitFor(t, "a completed checkpoint", func() (bool, error) {
		var s checkpointStats
		if err := getJSON(r.track+"/jobs/"+jid+"/checkpoints", &s); err != nil {
			return false, err
		}
		return s.Counts.Completed > 0, fmt.Errorf("%d completed", s.Counts.Completed)
	})
	killAM(t, r.app)
	select {
	case err := <-r.done:
		if err != nil {
			t.Fatalf("tide run: %v", err)
		}
	case <-time.After(3 * time.Minute):
		t.Fatal("the job did not finish after the AM restart")
	}
	id, _ := yarn.ParseApplicationID(r.app)
	rm, err := yarn.DialClientRM(env.YARNResourceManager, currentUser(), nil)
	if err != nil {
		t.Fatal(err)
	}
	defer rm.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	rep, err := rm.GetApplicationReport(ctx, id)
	if err != nil {
		t.Fatal(err)
	}
	if a := rep.GetCurrentApplicationAttemptId().GetAttemptId(); a != 2 {
		t.Fatalf("the application finished in attempt %d, want 2", a)
	}
	got, err := examples.ReadCommittedOutput(out)
	if err != nil {
		t.Fatal(err)
	}
	want, err := examples.ExpectedOutput(jobArgs)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("output differs after the AM restart:\n got %v\nwant %v", got, want)
	}
}

// killAM SIGKILLs the AM process of app's first attempt (its container ends).
func killAM(t *testing.T, app string) {
	t.Helper()
	prefix := "CONTAINER_ID=container_" + strings.TrimPrefix(app, "application_") + "_01_"
	procs, _ := filepath.Glob("/proc/[0-9]*/environ")
	for _, p := range procs {
		envb, err := os.ReadFile(p)
		if err != nil || !strings.Contains(string(envb), prefix) {
			continue
		}
		cmd, _ := os.ReadFile(filepath.Join(filepath.Dir(p), "cmdline"))
		if args := strings.Split(string(cmd), "\x00"); len(args) > 1 && args[1] == "jobmanager" {
			pid, _ := strconv.Atoi(filepath.Base(filepath.Dir(p)))
			if err := syscall.Kill(pid, syscall.SIGKILL); err != nil {
				t.Fatalf("killing the AM of %s (pid %d): %v", app, pid, err)
			}
			return
		}
	}
	t.Fatalf("no AM process of %s", app)
}
