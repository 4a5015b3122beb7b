package e2e

import (
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"syscall"
	"testing"
	"time"

	"github.com/tidestream/tide/internal/testkit"
	"github.com/tidestream/tide/standalone"
)

// amRestarter SIGKILLs the AM of a local cluster on fixed ports and starts it again by hand
// with the same command, checkpoint directory and ports, so the surviving TaskManagers
// reconnect to the next attempt.
type amRestarter struct {
	c        *standalone.LocalCluster
	dyn      []string // the AM's -D settings
	job      string
	args     []string // the job's arguments
	rpcPort  int
	restPort int
}

// startAMRestartCluster starts a local cluster of tms TaskManagers and an AM running job
// with args and the settings dyn, on free ports it keeps for the next attempts.
func startAMRestartCluster(t *testing.T, dyn []string, job string, args []string, tms int) (*standalone.LocalCluster, *amRestarter) {
	t.Helper()
	r := &amRestarter{dyn: dyn, job: job, args: args}
	for _, p := range []*int{&r.rpcPort, &r.restPort} {
		port, err := standalone.FreePort()
		if err != nil {
			t.Fatal(err)
		}
		*p = port
	}
	r.c = startLocal(t, standalone.LocalOptions{Dynamic: dyn, JobName: job, JobArgs: args,
		TaskManagers: tms, RPCPort: r.rpcPort, RESTPort: r.restPort})
	return r.c, r
}

// kill SIGKILLs the cluster's first AM and waits for it to end.
func (r *amRestarter) kill(t *testing.T) {
	t.Helper()
	pid, ok := amProcess(r.restPort)
	if !ok {
		t.Fatal("no AM process found")
	}
	if err := syscall.Kill(pid, syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	<-r.c.AMDone()
}

// restartedAM is an AM attempt the test started by hand.
type restartedAM struct {
	log  string        // its log file, in the cluster's log directory
	done chan struct{} // closed when it exited
	err  error         // its exit error, once done is closed
}

// start starts AM attempt n by hand (logging to jobmanager-<n>.log); it is stopped when the
// test ends, SIGTERM first.
func (r *amRestarter) start(t *testing.T, n int) *restartedAM {
	t.Helper()
	amArgs := []string{"jobmanager"}
	for _, d := range r.dyn {
		amArgs = append(amArgs, "-D", d)
	}
	amArgs = append(amArgs, "-D", "jobmanager.rpc.address=127.0.0.1", "-D", "jobmanager.rpc.port="+strconv.Itoa(r.rpcPort),
		"-D", "rest.bind-address=127.0.0.1", "-D", "rest.port="+strconv.Itoa(r.restPort),
		"--job-classname", r.job, "--")
	cmd := exec.Command(tideBin, append(amArgs, r.args...)...)
	am := &restartedAM{log: filepath.Join(r.c.LogDir(), "jobmanager-"+strconv.Itoa(n)+".log"), done: make(chan struct{})}
	logFile, err := os.Create(am.log)
	if err != nil {
		t.Fatal(err)
	}
	cmd.Stdout, cmd.Stderr = logFile, logFile
	if err := cmd.Start(); err != nil {
		logFile.Close()
		t.Fatal(err)
	}
	go func() {
		am.err = cmd.Wait()
		logFile.Close()
		close(am.done)
	}()
	t.Cleanup(func() {
		_ = cmd.Process.Signal(syscall.SIGTERM)
		select {
		case <-am.done:
		case <-time.After(10 * time.Second):
			_ = cmd.Process.Kill()
			<-am.done
		}
	})
	return am
}

// wait waits up to timeout for the AM to exit and fails t unless it exited successfully.
func (a *restartedAM) wait(t *testing.T, timeout time.Duration) {
	t.Helper()
	select {
	case <-a.done:
		if a.err != nil {
			t.Fatalf("the restarted AM exited with %v (log %s)", a.err, a.log)
		}
	case <-time.After(timeout):
		t.Fatalf("the job did not finish under the restarted AM within %s (log %s)", timeout, a.log)
	}
}

// amProcess finds the pid of the `tide jobmanager` serving REST on port.
func amProcess(port int) (int, bool) {
	for _, p := range testkit.Processes() {
		if p.Role() == "jobmanager" && slices.Contains(p.Args, "rest.port="+strconv.Itoa(port)) {
			return p.PID, true
		}
	}
	return 0, false
}
