package e2e

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/tidestream/tide/api"
	"github.com/tidestream/tide/examples"
	"github.com/tidestream/tide/internal/testkit"
	"github.com/tidestream/tide/standalone"
)

// A standalone AM SIGKILLed twice while CheckableCount runs at a steady rate, each time
// started again by hand after amAbsence on the same checkpoint directory and ports: the
// TaskManagers keep their subtasks running while the AM is away and each new AM adopts
// them (same attempt, nothing restored, no task deployed again: every TaskManager
// deployed once), checkpoints go on above the ids the dead AM used, the committed output
// is exact, and records kept reaching the sink while the AM was away (checkFlowedThrough).
func TestAMFailoverAdoptsRunningTasksStandalone(t *testing.T) {
	ckpt, out, stamps := t.TempDir(), t.TempDir(), t.TempDir()
	dyn := adoptingReactive(ckpt)
	const records = 160000
	args := stampedCountArgs(records, out, stamps)
	c, r := startAMRestartCluster(t, dyn, examples.CheckableCountName, args, 2)
	jid := jobID(t, c)
	d := waitRunningAt(t, c, jid, 2)
	waitCheckpointIn(t, c, jid, d.Attempt)

	var cur *testkit.RestartedAM
	var away []amAbsent
	for n := 2; n <= 3; n++ {
		before := latestCompleted(t, c, jid)
		waitDeploymentRecordedIn(t, ckpt, jid, d.Attempt)
		killed := time.Now()
		if cur == nil {
			r.Kill(t)
		} else {
			r.KillStarted(t, cur)
		}
		time.Sleep(amAbsence) // the job runs without an AM meanwhile
		cur = r.Start(t, n)
		after := waitRunningAt(t, c, jid, 2)
		back := time.Now()
		if after.Attempt != d.Attempt || after.RestoreFrom != 0 {
			t.Fatalf("AM %d: attempt %d restored from checkpoint %d; want attempt %d adopted, nothing restored (logs in %s)", n, after.Attempt, after.RestoreFrom, d.Attempt, c.LogDir())
		}
		var details api.JobDetails
		if err := rest(c, "/jobs/"+jid, &details); err != nil {
			t.Fatal(err)
		}
		if lf := details.LastFailover; lf == nil || lf.Outcome != "ADOPTED" || lf.ReportedSubtasks != lf.TotalSubtasks || lf.Attempt != d.Attempt {
			t.Fatalf("AM %d: GET /jobs/%s lastFailover %+v; want ADOPTED, attempt %d, every subtask reported", n, jid, lf, d.Attempt)
		}
		testkit.WaitFor(t, fmt.Sprintf("a checkpoint above %d under AM %d", before, n), func() (bool, error) {
			return latestCompleted(t, c, jid) > before, nil
		})
		away = append(away, amAbsent{killed: killed, back: back, checkpointed: time.Now()})
	}
	cur.Wait(t, 4*time.Minute)
	testkit.CheckExactOutput(t, out, args)
	checkFlowedThrough(t, stamps, records, away)
	for n := 2; n <= 3; n++ {
		log, err := os.ReadFile(filepath.Join(c.LogDir(), fmt.Sprintf("jobmanager-%d.log", n)))
		if err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(string(log), "recovered deployment adopted") {
			t.Errorf("AM %d did not adopt the running deployment (log %s)", n, filepath.Join(c.LogDir(), fmt.Sprintf("jobmanager-%d.log", n)))
		}
	}
	tmLogs, _ := filepath.Glob(filepath.Join(c.LogDir(), "taskmanager-*.log"))
	if len(tmLogs) != 2 {
		t.Fatalf("TaskManager logs %v, want 2", tmLogs)
	}
	for _, p := range tmLogs {
		b, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		if n := strings.Count(string(b), "deploying subtasks"); n != 1 {
			t.Errorf("%s deployed subtasks %d times, want once: every AM failover adopted them", p, n)
		}
		if n := strings.Count(string(b), "the AM adopted the subtasks kept across the AM failover"); n != 2 {
			t.Errorf("%s: %d adoptions, want 2", p, n)
		}
	}
}

// amAbsence is how long a test leaves the job without an AM after killing it.
const amAbsence = 4 * time.Second

// amAbsent is one AM failover as a test saw it: when it killed the AM, when the new AM
// ran the job (REST answered with it running), and when the new AM had completed a
// checkpoint.
type amAbsent struct{ killed, back, checkpointed time.Time }

// checkFlowedThrough checks CheckableCount's committed --timestamps output in dir after
// a run of records numbers that went through the AM failovers away: every number is
// there once, and around each failover (from the kill until the new AM completed a
// checkpoint) the longest time no record reached the sink is under half the time the AM
// was away. Records that stopped while the AM was away, or that the new AM replayed from
// a checkpoint, would leave a gap of at least that long; the bound leaves the other half
// to a loaded machine's pauses.
func checkFlowedThrough(t *testing.T, dir string, records int64, away []amAbsent) {
	t.Helper()
	st, err := examples.ReadCommittedTimestamps(dir)
	if err != nil {
		t.Fatal(err)
	}
	if err := examples.CheckTimestamps(st, records); err != nil {
		t.Fatalf("%v (output in %s)", err, dir)
	}
	for i, a := range away {
		absent := a.back.Sub(a.killed)
		gap, x, y := examples.LongestGap(st, a.killed, a.checkpointed)
		t.Logf("AM failover %d: the AM away %s; longest time without sink output %s (%d at %s, %d at %s)", i+1,
			absent.Round(time.Millisecond), gap, x.N, x.At.Format("15:04:05.000"), y.N, y.At.Format("15:04:05.000"))
		if gap >= absent/2 {
			t.Errorf("AM failover %d: no record reached the sink for %s (from %d at %s to %d at %s) while the AM was away for %s (killed %s): records stopped",
				i+1, gap, x.N, x.At.Format("15:04:05.000"), y.N, y.At.Format("15:04:05.000"), absent.Round(time.Millisecond), a.killed.Format("15:04:05.000"))
		}
	}
}

// latestCompleted is the id of the latest completed checkpoint the AM knows (0: none).
func latestCompleted(t testing.TB, c *standalone.LocalCluster, jid string) int64 {
	t.Helper()
	var s testkit.CheckpointStats
	if err := rest(c, "/jobs/"+jid+"/checkpoints", &s); err != nil || s.Latest.Completed == nil {
		return 0
	}
	return s.Latest.Completed.ID
}
