package testkit

import (
	"context"
	"os/exec"
	"time"
)

// RunCommand runs bin to completion (killed after timeout) with env (nil: this
// process's environment) and returns its combined output and exit error.
func RunCommand(ctx context.Context, timeout time.Duration, env []string, bin string, args ...string) (string, error) {
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, bin, args...)
	cmd.Env = env
	out, err := cmd.CombinedOutput()
	return string(out), err
}
