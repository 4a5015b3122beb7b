package hadooptest

import (
	"bufio"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"
)

// holderEnv makes the test binary a process holding the cluster lock (helper mode).
const holderEnv = "TIDE_HADOOPTEST_HOLD"

// TestHolderProcess is not a test: run as a child by TestDisruptWaitsForOtherProcesses, it
// holds the lock of $TIDE_HADOOPTEST_HOLD shared (or exclusive with a "!" prefix), says
// "held", and keeps it until its stdin closes.
func TestHolderProcess(t *testing.T) {
	path := os.Getenv(holderEnv)
	if path == "" {
		t.Skip("helper process of TestDisruptWaitsForOtherProcesses")
	}
	exclusive := path[0] == '!'
	if exclusive {
		path = path[1:]
	}
	if err := hold(path, exclusive); err != nil {
		t.Fatal(err)
	}
	os.Stdout.WriteString("held\n")
	_, _ = bufio.NewReader(os.Stdin).ReadString('\n')
	release(exclusive)
}

// holder starts a process holding the lock beside envPath; held is closed once it holds
// it, stop ends the process (and its hold).
func holder(t *testing.T, envPath string, exclusive bool) (held <-chan struct{}, stop func()) {
	t.Helper()
	arg := envPath
	if exclusive {
		arg = "!" + envPath
	}
	cmd := exec.Command(os.Args[0], "-test.run=^TestHolderProcess$")
	cmd.Env = append(os.Environ(), holderEnv+"="+arg)
	in, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	h := make(chan struct{})
	go func() {
		sc := bufio.NewScanner(out)
		for sc.Scan() {
			if sc.Text() == "held" {
				close(h)
			}
		}
	}()
	done := false
	stop = func() {
		if !done {
			done = true
			in.Close()
			_ = cmd.Wait()
		}
	}
	t.Cleanup(stop)
	return h, stop
}

func waitHeld(t *testing.T, held <-chan struct{}) {
	t.Helper()
	select {
	case <-held:
	case <-time.After(time.Minute):
		t.Fatal("the holder process did not take the lock")
	}
}

// A disrupting test waits for the tests of another process that use the cluster, and
// keeps them out while it runs; tests that only share it do not wait for each other.
func TestDisruptWaitsForOtherProcesses(t *testing.T) {
	env := filepath.Join(t.TempDir(), "env")
	held, stopShared := holder(t, env, false)
	waitHeld(t, held)

	if err := hold(env, false); err != nil { // shared beside shared: at once
		t.Fatal(err)
	}
	got := make(chan error, 1)
	go func() { got <- hold(env, true) }() // the same test now disrupts: waits for the other process
	select {
	case err := <-got:
		t.Fatalf("took the cluster alone while another process used it (err %v)", err)
	case <-time.After(300 * time.Millisecond):
	}
	stopShared()
	if err := <-got; err != nil {
		t.Fatal(err)
	}

	// While this process disrupts, another process that wants to share waits.
	held, _ = holder(t, env, false)
	select {
	case <-held:
		t.Fatal("another process shared the cluster while this one disrupted it")
	case <-time.After(300 * time.Millisecond):
	}
	release(true) // back to shared: the other process may share again
	waitHeld(t, held)
	release(false)
}
