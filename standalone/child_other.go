//go:build !linux

package standalone

import "os/exec"

// dieWithParent does nothing where the kernel cannot signal a child when its parent dies:
// a local cluster's processes outlive a tide run that is killed.
func dieWithParent(*exec.Cmd) {}
