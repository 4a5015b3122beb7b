package testkit

import (
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
)

// Process is a process of this machine as /proc shows it: the e2e tests find the tide
// processes that YARN, the kubelet or a script started (which they did not start
// themselves) by command line and environment.
type Process struct {
	PID  int
	Args []string // the command line: Args[0] is the program
}

// Processes lists the processes whose command line can be read (processes that exit
// while it runs are left out).
func Processes() []Process {
	cmds, _ := filepath.Glob("/proc/[0-9]*/cmdline")
	out := make([]Process, 0, len(cmds))
	for _, p := range cmds {
		b, err := os.ReadFile(p)
		if err != nil || len(b) == 0 {
			continue
		}
		pid, err := strconv.Atoi(filepath.Base(filepath.Dir(p)))
		if err != nil {
			continue
		}
		out = append(out, Process{PID: pid, Args: strings.Split(strings.TrimSuffix(string(b), "\x00"), "\x00")})
	}
	return out
}

// Role is the tide subcommand the process runs (Args[1]: "jobmanager", "taskmanager"),
// "" without one.
func (p Process) Role() string {
	if len(p.Args) < 2 {
		return ""
	}
	return p.Args[1]
}

// Flag is the value that follows flag on the command line ("--resource-id" → "tm-1-1").
func (p Process) Flag(flag string) (string, bool) {
	i := slices.Index(p.Args, flag)
	if i < 0 || i+1 >= len(p.Args) {
		return "", false
	}
	return p.Args[i+1], true
}

// Environ is the process's environment as KEY=VALUE entries (nil if it cannot be read).
func (p Process) Environ() []string {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(p.PID) + "/environ")
	if err != nil || len(b) == 0 {
		return nil
	}
	return strings.Split(strings.TrimSuffix(string(b), "\x00"), "\x00")
}

// Env is the value of key in the process's environment.
func (p Process) Env(key string) (string, bool) {
	for _, kv := range p.Environ() {
		if v, ok := strings.CutPrefix(kv, key+"="); ok {
			return v, true
		}
	}
	return "", false
}
