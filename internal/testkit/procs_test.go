package testkit

import (
	"os"
	"os/exec"
	"testing"
)

// TestProcesses finds a child process by its command line and environment.
func TestProcesses(t *testing.T) {
	cmd := exec.Command("bash", "-c", "sleep 300; :", "x", "--resource-id", "tm-9")
	cmd.Env = append(os.Environ(), "TIDE_TESTKIT_MARK=procs-test")
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cmd.Process.Kill(); _ = cmd.Wait() })

	var found *Process
	WaitFor(t, "the child in /proc", func() (bool, error) {
		for _, p := range Processes() {
			if p.PID == cmd.Process.Pid {
				found = &p
				return true, nil
			}
		}
		return false, nil
	})
	if got := found.Role(); got != "-c" {
		t.Errorf("Role() = %q, want -c", got)
	}
	if v, ok := found.Flag("--resource-id"); !ok || v != "tm-9" {
		t.Errorf("Flag(--resource-id) = %q, %v; want tm-9", v, ok)
	}
	for _, f := range []string{"--missing", "tm-9"} {
		if v, ok := found.Flag(f); ok {
			t.Errorf("Flag(%s) = %q, want none", f, v)
		}
	}
	if v, ok := found.Env("TIDE_TESTKIT_MARK"); !ok || v != "procs-test" {
		t.Errorf("Env(TIDE_TESTKIT_MARK) = %q, %v; want procs-test", v, ok)
	}
	if v, ok := found.Env("TIDE_TESTKIT_UNSET"); ok {
		t.Errorf("Env(TIDE_TESTKIT_UNSET) = %q, want unset", v)
	}
}
