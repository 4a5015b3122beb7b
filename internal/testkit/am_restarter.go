package testkit

import (
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/tidestream/tide/standalone"
)

// AMRestarter SIGKILLs the AM of a local cluster and starts it again by hand with the
// command of a next attempt (standalone.LocalCluster.NextAMArgs: the same settings,
// checkpoint directory and ports), so the surviving TaskManagers reconnect to it. The AMs it
// starts get the test's environment, not LocalOptions.Env (which only the first AM and the
// TaskManagers get).
type AMRestarter struct {
	C   *standalone.LocalCluster
	bin string
}

// StartAMRestartCluster starts the local cluster opts describes (see StartLocal).
func StartAMRestartCluster(t testing.TB, bin string, opts standalone.LocalOptions) *AMRestarter {
	t.Helper()
	return &AMRestarter{C: StartLocal(t, bin, opts), bin: bin}
}

// Kill SIGKILLs the cluster's first AM and waits for it to end.
func (r *AMRestarter) Kill(t testing.TB) {
	t.Helper()
	if err := r.C.SignalAM(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	<-r.C.AMDone()
}

// KillStarted SIGKILLs an AM that Start started and waits for it to end.
func (r *AMRestarter) KillStarted(t testing.TB, am *RestartedAM) {
	t.Helper()
	if err := am.cmd.Process.Kill(); err != nil {
		t.Fatalf("SIGKILL the AM started by hand: %v", err)
	}
	<-am.Done
}

// RestartedAM is an AM attempt the test started by hand.
type RestartedAM struct {
	Log  string        // its log file, in the cluster's log directory
	Done chan struct{} // closed when it exited
	cmd  *exec.Cmd
	err  error // its exit error, once Done is closed
}

// Start starts AM attempt n by hand (logging to jobmanager-<n>.log); it is stopped when the
// test ends, SIGTERM first.
func (r *AMRestarter) Start(t testing.TB, n int) *RestartedAM {
	t.Helper()
	cmd := exec.Command(r.bin, r.C.NextAMArgs()...)
	am := &RestartedAM{Log: filepath.Join(r.C.LogDir(), "jobmanager-"+strconv.Itoa(n)+".log"), Done: make(chan struct{}), cmd: cmd}
	logFile, err := os.Create(am.Log)
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
		close(am.Done)
	}()
	t.Cleanup(func() {
		_ = cmd.Process.Signal(syscall.SIGTERM)
		select {
		case <-am.Done:
		case <-time.After(10 * time.Second):
			_ = cmd.Process.Kill()
			<-am.Done
		}
	})
	return am
}

// Wait waits up to timeout for the AM to exit and fails t unless it exited successfully.
func (a *RestartedAM) Wait(t testing.TB, timeout time.Duration) {
	t.Helper()
	select {
	case <-a.Done:
		if a.err != nil {
			t.Fatalf("the restarted AM exited with %v (log %s)", a.err, a.Log)
		}
	case <-time.After(timeout):
		t.Fatalf("the job did not finish under the restarted AM within %s (log %s)", timeout, a.Log)
	}
}

// Logged reports whether the AM's log holds text, failing t if the log cannot be read.
func (a *RestartedAM) Logged(t testing.TB, text string) bool {
	t.Helper()
	b, err := os.ReadFile(a.Log)
	if err != nil {
		t.Fatal(err)
	}
	return strings.Contains(string(b), text)
}
