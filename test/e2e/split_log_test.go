package e2e

import (
	"net/url"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/tidestream/tide/core/source"
	"github.com/tidestream/tide/examples"
	"github.com/tidestream/tide/internal/testkit"
	"github.com/tidestream/tide/stream"
)

// A standalone AM SIGKILLed while CheckableCount's readers work through their number
// splits, and started again on the same checkpoint directory: the split-assignment log
// it left is replayed by the next AM, and the committed output is exact (no split read
// twice, none lost).
func TestSplitLogSurvivesStandaloneAMKill(t *testing.T) {
	ckpt, out := t.TempDir(), t.TempDir()
	args := []string{"--records", "240000", "--keys", "7", "--rate", "4000", "--output", out}
	c, am := startAMRestartCluster(t, reactive(ckpt, "200 ms"), examples.CheckableCountName, args, 2)
	jid := jobID(t, c)
	d := waitRunningAt(t, c, jid, 2)
	waitCheckpointIn(t, c, jid, d.Attempt)

	build, _ := stream.Lookup(examples.CheckableCountName)
	job, err := build(args)
	if err != nil {
		t.Fatal(err)
	}
	logName := filepath.Join(ckpt, jid, "splits", url.QueryEscape(job.Sources()[0].Vertex)+".log")
	// Wait until the log holds splits handed out after a completed checkpoint.
	testkit.WaitFor(t, "splits assigned since the last checkpoint in the log", func() (bool, error) {
		data, err := os.ReadFile(logName)
		if err != nil {
			return false, err
		}
		entries, _, err := source.DecodeLog(data)
		if err != nil {
			return false, err
		}
		t, err := source.Replay(entries)
		if err != nil {
			return false, err
		}
		return t.LastCompleted() > 0 && len(t.Uncheckpointed()) > 0, nil
	})

	am.Kill(t)
	am2 := am.Start(t, 2)
	am2.Wait(t, 4*time.Minute)
	testkit.CheckExactOutput(t, out, args)
	if !am2.Logged(t, "split assignment log replayed") {
		t.Errorf("the second AM did not replay the split assignment log (log %s)", am2.Log)
	}
	if _, err := os.Stat(logName); !os.IsNotExist(err) {
		t.Errorf("split assignment log of the finished job still there: %v", err)
	}
}
