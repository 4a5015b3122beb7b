// Package initgc keeps Go's garbage collector off while a tide binary's packages
// initialize. Their init functions allocate about 3.6 MB (GODEBUG=inittrace=1; the
// Kubernetes client's API scheme alone 645 KB) and the collector, whose first goal is
// 4 MiB, would run while they do; every process (the AM, each TaskManager, each CLI
// command) paid 8-10 ms of CPU for it before doing anything (`tide --version`: 30 -> 19 ms
// of CPU). Go initializes a package once the packages it imports are, and this one imports
// little, so it is initialized early: in the stock binary it is the 200th of 410 packages,
// after 1.46 MB of the 3.6 MB, before the collector's first goal. tidecli.Run calls Done
// first thing.
//
// It does nothing when GOGC is set (the user's setting stands) or in a test binary (no
// Run call may come to turn the collector back on).
package initgc

import (
	"os"
	"runtime/debug"
	"sync"
	"testing"
)

var (
	off  bool
	once sync.Once
)

func init() {
	if os.Getenv("GOGC") != "" || testing.Testing() {
		return
	}
	debug.SetGCPercent(-1)
	off = true
}

// Done turns the collector back on with Go's default GOGC (100), if init turned it off.
// Only the first call does anything.
func Done() {
	once.Do(func() {
		if off {
			debug.SetGCPercent(100)
		}
	})
}
