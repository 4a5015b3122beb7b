package e2e

import (
	"fmt"
	"testing"
	"time"

	"github.com/tidestream/tide/examples"
	"github.com/tidestream/tide/internal/testkit"
	"github.com/tidestream/tide/standalone"
)

// BenchmarkAMFailoverGap: the longest time no record reached CheckableCount's sink (the
// sink's wall-clock times in the committed --timestamps output) around a SIGKILL of the
// standalone AM and its restart by hand, with the TaskManagers' subtasks adopted by the
// new AM, next to the same failover with adoption off (today's restore from the latest
// checkpoint: the baseline), in the same run.
func BenchmarkAMFailoverGap(b *testing.B) {
	var adopt, restore time.Duration
	for i := 0; i < b.N; i++ {
		adopt += amFailoverGap(b, "60 s")
		restore += amFailoverGap(b, "0 s")
	}
	n := time.Duration(b.N)
	b.ReportMetric(float64((adopt / n).Milliseconds()), "ms-gap-adopted")
	b.ReportMetric(float64((restore / n).Milliseconds()), "ms-gap-restored")
	fmt.Printf("AM failover processing gap: %s with the subtasks adopted; %s restoring from the latest checkpoint (baseline, same run)\n",
		(adopt / n).Round(time.Millisecond), (restore / n).Round(time.Millisecond))
}

// amFailoverGap runs one failover with jobmanager.failover.task-adoption.timeout set to
// adoptTimeout and returns the longest stretch without committed sink output from the
// kill until the new AM completed a checkpoint. After a restore from a checkpoint, the
// committed records after that checkpoint are the replayed ones, written after the
// restore: the gap covers the replay.
func amFailoverGap(b *testing.B, adoptTimeout string) time.Duration {
	ckpt, out, stamps := b.TempDir(), b.TempDir(), b.TempDir()
	dyn := append(reactive(ckpt, "300 ms"), "jobmanager.failover.task-adoption.timeout="+adoptTimeout)
	args := []string{"--records", "100000000", "--keys", "7", "--rate", "4000", "--output", out, "--timestamps", stamps}
	r := testkit.StartAMRestartCluster(b, tideBin, standalone.LocalOptions{Dynamic: dyn,
		JobName: examples.CheckableCountName, JobArgs: args, TaskManagers: 2})
	c := r.C
	defer c.Stop(b.Context())
	jid := jobID(b, c)
	d := waitRunningAt(b, c, jid, 2)
	waitCheckpointIn(b, c, jid, d.Attempt)

	killed := time.Now()
	r.Kill(b)
	am2 := r.Start(b, 2)
	defer r.KillStarted(b, am2)
	d = waitRunningAt(b, c, jid, 2)
	waitCheckpointIn(b, c, jid, d.Attempt)
	end := time.Now()
	// One more checkpoint commits the records around the window's end.
	last := latestCompleted(b, c, jid)
	testkit.WaitFor(b, "a checkpoint after the measured window", func() (bool, error) {
		return latestCompleted(b, c, jid) > last, nil
	})
	st, err := examples.ReadCommittedTimestamps(stamps)
	if err != nil {
		b.Fatal(err)
	}
	gap, _, _ := examples.LongestGap(st, killed, end)
	return gap
}
