package e2e

import (
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/tidestream/tide/core/source"
	"github.com/tidestream/tide/examples"
	"github.com/tidestream/tide/internal/testkit"
	"github.com/tidestream/tide/standalone"
	"github.com/tidestream/tide/stream"
)

// A standalone AM SIGKILLed while CheckableCount's readers work through their number
// splits, and started again on the same checkpoint directory: the split-assignment log
// it left is replayed by the next AM, and the committed output is exact (no split read
// twice, none lost).
func TestSplitLogSurvivesStandaloneAMKill(t *testing.T) {
	ckpt, out := t.TempDir(), t.TempDir()
	rpcPort, err := standalone.FreePort()
	if err != nil {
		t.Fatal(err)
	}
	restPort, err := standalone.FreePort()
	if err != nil {
		t.Fatal(err)
	}
	dyn := reactive(ckpt, "200 ms")
	args := []string{"--records", "240000", "--keys", "7", "--rate", "4000", "--output", out}
	c := startLocal(t, standalone.LocalOptions{Dynamic: dyn, JobName: examples.CheckableCountName, JobArgs: args,
		TaskManagers: 2, RPCPort: rpcPort, RESTPort: restPort})
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

	pid, ok := amProcess(restPort)
	if !ok {
		t.Fatal("no AM process found")
	}
	if err := syscall.Kill(pid, syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	<-c.AMDone()
	amArgs := []string{"jobmanager"}
	for _, d := range dyn {
		amArgs = append(amArgs, "-D", d)
	}
	amArgs = append(amArgs, "-D", "jobmanager.rpc.address=127.0.0.1", "-D", "jobmanager.rpc.port="+strconv.Itoa(rpcPort),
		"-D", "rest.bind-address=127.0.0.1", "-D", "rest.port="+strconv.Itoa(restPort),
		"--job-classname", examples.CheckableCountName, "--")
	am2 := exec.Command(tideBin, append(amArgs, args...)...)
	logPath := filepath.Join(c.LogDir(), "jobmanager-2.log")
	log2, err := os.Create(logPath)
	if err != nil {
		t.Fatal(err)
	}
	defer log2.Close()
	am2.Stdout, am2.Stderr = log2, log2
	if err := am2.Start(); err != nil {
		t.Fatal(err)
	}
	exited := make(chan error, 1)
	go func() { exited <- am2.Wait() }()
	select {
	case err := <-exited:
		if err != nil {
			t.Fatalf("second AM exited with %v (log %s)", err, logPath)
		}
	case <-time.After(4 * time.Minute):
		_ = am2.Process.Kill()
		<-exited
		t.Fatalf("the job did not finish under the second AM (log %s)", logPath)
	}
	testkit.CheckExactOutput(t, out, args)
	logged, err := os.ReadFile(logPath)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(logged), "split assignment log replayed") {
		t.Errorf("the second AM did not replay the split assignment log (log %s)", logPath)
	}
	if _, err := os.Stat(logName); !os.IsNotExist(err) {
		t.Errorf("split assignment log of the finished job still there: %v", err)
	}
}
