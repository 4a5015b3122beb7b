package e2e

import (
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"syscall"
	"testing"
	"time"

	"github.com/tidestream/tide/examples"
	"github.com/tidestream/tide/standalone"
)

// BenchmarkAMFailoverGap: the longest time no record reached CheckableCount's sink (its
// part files, committed or in progress, stopped growing) around a SIGKILL of the
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
// adoptTimeout and returns the longest stretch without sink output from the kill until
// the new AM completed a checkpoint.
func amFailoverGap(b *testing.B, adoptTimeout string) time.Duration {
	ckpt, out := b.TempDir(), b.TempDir()
	dyn := append(reactive(ckpt, "300 ms"), "jobmanager.failover.task-adoption.timeout="+adoptTimeout)
	args := []string{"--records", "100000000", "--keys", "7", "--rate", "4000", "--output", out}
	var ports [2]int
	for i := range ports {
		p, err := standalone.FreePort()
		if err != nil {
			b.Fatal(err)
		}
		ports[i] = p
	}
	c := startLocal(b, standalone.LocalOptions{Dynamic: dyn, JobName: examples.CheckableCountName, JobArgs: args,
		TaskManagers: 2, RPCPort: ports[0], RESTPort: ports[1]})
	defer c.Stop(b.Context())
	jid := jobID(b, c)
	d := waitRunningAt(b, c, jid, 2)
	waitCheckpointIn(b, c, jid, d.Attempt)

	stop := make(chan struct{})
	gaps := make(chan time.Duration, 1)
	var killed time.Time
	killedAt := make(chan time.Time, 1)
	go func() { gaps <- watchOutputGap(out, killedAt, stop) }()

	pid, ok := amProcess(ports[1])
	if !ok {
		b.Fatal("no AM process found")
	}
	killed = time.Now()
	killedAt <- killed
	if err := syscall.Kill(pid, syscall.SIGKILL); err != nil {
		b.Fatal(err)
	}
	<-c.AMDone()
	amArgs := []string{"jobmanager"}
	for _, s := range dyn {
		amArgs = append(amArgs, "-D", s)
	}
	amArgs = append(amArgs, "-D", "jobmanager.rpc.address=127.0.0.1", "-D", "jobmanager.rpc.port="+strconv.Itoa(ports[0]),
		"-D", "rest.bind-address=127.0.0.1", "-D", "rest.port="+strconv.Itoa(ports[1]),
		"--job-classname", examples.CheckableCountName, "--")
	am2 := exec.Command(tideBin, append(amArgs, args...)...)
	logFile, err := os.Create(filepath.Join(c.LogDir(), "jobmanager-2.log"))
	if err != nil {
		b.Fatal(err)
	}
	defer logFile.Close()
	am2.Stdout, am2.Stderr = logFile, logFile
	if err := am2.Start(); err != nil {
		b.Fatal(err)
	}
	defer func() { _ = am2.Process.Kill(); _ = am2.Wait() }()
	d = waitRunningAt(b, c, jid, 2)
	waitCheckpointIn(b, c, jid, d.Attempt)
	time.Sleep(2 * time.Second) // output after recovery
	close(stop)
	return <-gaps
}

// watchOutputGap samples the bytes under dir every 20 ms and returns the longest time
// without growth from the kill (its time arrives on killedAt) until stop.
func watchOutputGap(dir string, killedAt <-chan time.Time, stop <-chan struct{}) time.Duration {
	size := func() int64 {
		var n int64
		_ = filepath.WalkDir(dir, func(_ string, e fs.DirEntry, err error) error {
			if err == nil && !e.IsDir() {
				if info, err := e.Info(); err == nil {
					n += info.Size()
				}
			}
			return nil
		})
		return n
	}
	kill := <-killedAt
	last, grew, longest := size(), kill, time.Duration(0)
	t := time.NewTicker(20 * time.Millisecond)
	defer t.Stop()
	for {
		select {
		case now := <-t.C:
			if s := size(); s != last {
				longest = max(longest, now.Sub(grew))
				last, grew = s, now
			}
		case <-stop:
			return max(longest, time.Since(grew))
		}
	}
}
