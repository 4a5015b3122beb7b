package am

import (
	"fmt"
	"os"
	"strconv"
	"strings"
	"syscall"
)

// CrashPointEnv names a point at which the AM process SIGKILLs itself, for the failover
// tests that must kill it at a moment no outside observer can catch:
//
//	checkpoint-completed:N   once the _metadata of a checkpoint with id >= N is written,
//	                         before any TaskManager is told it completed (two-phase sinks
//	                         hold its transactions pre-committed, not yet committed)
//
// Unset: never. The process dies as it would on a SIGKILL from outside: no deregistration,
// no flushing; the next AM attempt finds what a real crash leaves.
const CrashPointEnv = "TIDE_AM_CRASH_AT"

// crashPoint is a parsed CrashPointEnv; the zero value never fires.
type crashPoint struct {
	afterCompleted int64 // checkpoint-completed:N (0: off)
}

// parseCrashPoint parses the value of CrashPointEnv ("" is off).
func parseCrashPoint(v string) (crashPoint, error) {
	if v == "" {
		return crashPoint{}, nil
	}
	name, arg, ok := strings.Cut(v, ":")
	n, err := strconv.ParseInt(arg, 10, 64)
	if !ok || name != "checkpoint-completed" || err != nil || n < 1 {
		return crashPoint{}, fmt.Errorf("%s=%q: want checkpoint-completed:N with N >= 1", CrashPointEnv, v)
	}
	return crashPoint{afterCompleted: n}, nil
}

// crashIfCompleted kills the process if the point is checkpoint-completed at or below id.
func (c *checkpointCoordinator) crashIfCompleted(id int64) {
	if n := c.crash.afterCompleted; n == 0 || id < n {
		return
	}
	c.log.Error("crash point reached: the AM SIGKILLs itself", "env", CrashPointEnv, "checkpoint", id)
	_ = syscall.Kill(os.Getpid(), syscall.SIGKILL)
	select {} // the signal is on its way
}
