// Package test holds the harnesses' shared scripts (stop-pids.sh); their own Go code is in
// test/hadoop, test/kafka and test/e2e.
package test

import (
	"context"
	"errors"
	"os/exec"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/tidestream/tide/internal/testkit"
)

// start runs a shell command as its own process and reaps it when it exits.
func start(t *testing.T, script string) (*exec.Cmd, <-chan error) {
	t.Helper()
	cmd := exec.Command("bash", "-c", script)
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	t.Cleanup(func() { _ = cmd.Process.Kill() })
	return cmd, done
}

// ended waits for a process to exit and returns the signal that ended it.
func ended(t *testing.T, done <-chan error) syscall.Signal {
	t.Helper()
	select {
	case err := <-done:
		ee, ok := err.(*exec.ExitError)
		if !ok {
			t.Fatalf("process exited with %v, want a signal", err)
		}
		return ee.Sys().(syscall.WaitStatus).Signal()
	case <-time.After(time.Minute):
		t.Fatal("process still running after stop-pids.sh returned")
		return 0
	}
}

// TestStopPIDs: stop-pids.sh ends a process with SIGTERM, and one that ignores SIGTERM with
// SIGKILL after the timeout; a pid that is already gone is no error.
func TestStopPIDs(t *testing.T) {
	polite, politeDone := start(t, "exec sleep 300")
	stubborn, stubbornDone := start(t, `trap "" TERM; exec sleep 300`)
	gone, goneDone := start(t, "exit 0")
	if err := <-goneDone; err != nil {
		t.Fatal(err)
	}
	pids := []string{strconv.Itoa(polite.Process.Pid), strconv.Itoa(stubborn.Process.Pid), strconv.Itoa(gone.Process.Pid)}

	out, err := testkit.RunCommand(context.Background(), time.Minute, nil, "./stop-pids.sh", append([]string{"demo", "1"}, pids...)...)
	if err != nil {
		t.Fatalf("stop-pids.sh: %v\n%s", err, out)
	}
	if sig := ended(t, politeDone); sig != syscall.SIGTERM {
		t.Errorf("the polite process ended by %v, want SIGTERM", sig)
	}
	if sig := ended(t, stubbornDone); sig != syscall.SIGKILL {
		t.Errorf("the process ignoring SIGTERM ended by %v, want SIGKILL", sig)
	}
	if want := "demo: still running after 1s: " + pids[1] + "; sending SIGKILL"; !strings.Contains(out, want) {
		t.Errorf("output %q lacks %q", out, want)
	}
}

func TestStopPIDsBadArguments(t *testing.T) {
	for _, args := range [][]string{{}, {"demo"}, {"demo", "x", "1"}, {"demo", "1", "0"}, {"demo", "1", "12a"}} {
		out, err := testkit.RunCommand(context.Background(), time.Minute, nil, "./stop-pids.sh", args...)
		var ee *exec.ExitError
		if !errors.As(err, &ee) || ee.ExitCode() != 2 {
			t.Errorf("stop-pids.sh %q: %v (%s), want exit status 2", args, err, out)
		}
	}
}
