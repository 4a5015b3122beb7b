// Package test holds the harnesses' shared scripts (stop-pids.sh); their own Go code is in
// test/hadoop, test/kafka and test/e2e.
package test

import (
	"bufio"
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
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

// startGroup runs a shell command as the leader of a new process group; the command's
// first output line is a pid, which it returns with the leader.
func startGroup(t *testing.T, script string) (*exec.Cmd, <-chan error, int) {
	t.Helper()
	cmd := exec.Command("bash", "-c", script)
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) })
	line, err := bufio.NewReader(stdout).ReadString('\n')
	if err != nil {
		t.Fatalf("reading the child's pid: %v", err)
	}
	child, err := strconv.Atoi(strings.TrimSpace(line))
	if err != nil {
		t.Fatalf("child pid %q: %v", line, err)
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	return cmd, done, child
}

// dead reports whether pid is gone (or a zombie nobody reaped yet: it runs no more).
func dead(pid int) bool {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return true
	}
	s := string(b)
	i := strings.LastIndexByte(s, ')')
	return i < 0 || strings.HasPrefix(s[i+1:], " Z") || strings.HasPrefix(s[i+1:], " X")
}

// TestStopPIDsGroups: with -g, stop-pids.sh signals whole process groups: a leader that
// ignores SIGTERM gets SIGKILL after the timeout, its child (which does not ignore it)
// goes at the SIGTERM, a group whose leader has exited is stopped through the child
// that is left, and a pid that leads no group is stopped alone (never its group: here,
// the test's own).
func TestStopPIDsGroups(t *testing.T) {
	stubborn, stubbornDone, stubbornChild := startGroup(t, `sleep 300 & echo $!; trap "" TERM; while :; do sleep 0.1 || :; done`)
	orphaned, orphanedDone, orphanedChild := startGroup(t, `sleep 300 </dev/null >/dev/null 2>&1 & echo $!; exit 0`)
	if err := <-orphanedDone; err != nil {
		t.Fatalf("the group leader that exits at once: %v", err)
	}
	if dead(orphanedChild) {
		t.Fatalf("child %d of the exited leader is not running before stop-pids.sh", orphanedChild)
	}
	plain, plainDone := start(t, "exec sleep 300") // in this test's process group
	pids := []string{strconv.Itoa(stubborn.Process.Pid), strconv.Itoa(orphaned.Process.Pid), strconv.Itoa(plain.Process.Pid)}

	out, err := testkit.RunCommand(context.Background(), time.Minute, nil, "./stop-pids.sh", append([]string{"-g", "demo", "1"}, pids...)...)
	if err != nil {
		t.Fatalf("stop-pids.sh -g: %v\n%s", err, out)
	}
	if sig := ended(t, stubbornDone); sig != syscall.SIGKILL {
		t.Errorf("the group leader ignoring SIGTERM ended by %v, want SIGKILL", sig)
	}
	if sig := ended(t, plainDone); sig != syscall.SIGTERM {
		t.Errorf("the process leading no group ended by %v, want SIGTERM", sig)
	}
	for _, pid := range []int{stubbornChild, orphanedChild} {
		testkit.WaitFor(t, "child "+strconv.Itoa(pid)+" gone with its process group", func() (bool, error) { return dead(pid), nil })
	}
	for _, want := range []string{"demo: stopping process group " + pids[0], "demo: still running after 1s: " + pids[0] + "; sending SIGKILL",
		"demo: pid " + pids[2] + " leads no process group", "demo: stopping pid " + pids[2]} {
		if !strings.Contains(out, want) {
			t.Errorf("output %q lacks %q", out, want)
		}
	}
}

func TestStopPIDsBadArguments(t *testing.T) {
	for _, args := range [][]string{{}, {"demo"}, {"demo", "x", "1"}, {"demo", "1", "0"}, {"demo", "1", "12a"}, {"-g"}, {"-g", "demo", "x", "1"}} {
		out, err := testkit.RunCommand(context.Background(), time.Minute, nil, "./stop-pids.sh", args...)
		var ee *exec.ExitError
		if !errors.As(err, &ee) || ee.ExitCode() != 2 {
			t.Errorf("stop-pids.sh %q: %v (%s), want exit status 2", args, err, out)
		}
	}
}

// TestKubeDownStopsProcessGroups runs test/kube/down.sh against stand-ins for what
// test/kube/up.sh starts (never the shared control plane): a process group per component,
// each with a child, whose pid files are in a temporary KUBE_BASE, and a pod process
// group left behind by a kubelet. down.sh stops every group through stop-pids.sh -g,
// the kubelet first, and removes the env file.
func TestKubeDownStopsProcessGroups(t *testing.T) {
	base := t.TempDir()
	for _, d := range []string{"pids", "kubelet/pods/ns_pod-1"} {
		if err := os.MkdirAll(filepath.Join(base, d), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	env := filepath.Join(base, "env")
	if err := os.WriteFile(env, []byte("TIDE_KUBE_VERSION=stand-in\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	type group struct {
		name  string
		done  <-chan error
		child int
	}
	var groups []group
	for _, c := range []string{"kubelet", "kube-controller-manager", "kube-scheduler", "kube-apiserver", "etcd", "pod"} {
		cmd, done, child := startGroup(t, `sleep 300 </dev/null >/dev/null 2>&1 & echo $!; exec sleep 300`)
		f := filepath.Join(base, "pids", c+".pid")
		if c == "pod" {
			f = filepath.Join(base, "kubelet/pods/ns_pod-1/main.pid")
		}
		if err := os.WriteFile(f, []byte(strconv.Itoa(cmd.Process.Pid)+"\n"), 0o644); err != nil {
			t.Fatal(err)
		}
		groups = append(groups, group{c, done, child})
	}

	out, err := testkit.RunCommand(context.Background(), 2*time.Minute, []string{"KUBE_ENV=" + env}, "./kube/down.sh")
	if err != nil {
		t.Fatalf("down.sh: %v\n%s", err, out)
	}
	for _, g := range groups {
		if sig := ended(t, g.done); sig != syscall.SIGTERM {
			t.Errorf("%s ended by %v, want SIGTERM", g.name, sig)
		}
		testkit.WaitFor(t, g.name+"'s child gone with its process group", func() (bool, error) { return dead(g.child), nil })
	}
	if i, j := strings.Index(out, "kube: kubelet: stopping process group"), strings.Index(out, "kube: etcd: stopping process group"); i < 0 || j < i {
		t.Errorf("down.sh did not stop the kubelet's process group first and etcd's later:\n%s", out)
	}
	if !strings.Contains(out, "kube: leftover pod: stopping process group") {
		t.Errorf("down.sh did not stop the leftover pod process group:\n%s", out)
	}
	if _, err := os.Stat(env); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("the env file %s survives down.sh: %v", env, err)
	}
}
