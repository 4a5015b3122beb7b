package testkit

import (
	"syscall"
	"testing"
	"time"
)

// CPUTime is the CPU time (user + system) of this process (who: syscall.RUSAGE_SELF) or of
// the children it waited for (syscall.RUSAGE_CHILDREN) so far.
func CPUTime(tb testing.TB, who int) time.Duration {
	tb.Helper()
	var ru syscall.Rusage
	if err := syscall.Getrusage(who, &ru); err != nil {
		tb.Fatal(err)
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
