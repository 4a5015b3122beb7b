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
//	savepoint-acknowledged:N once a canonical savepoint has N acknowledgements: N subtasks
//	                         wrote their state into its directory, which has no _metadata
//	savepoint-copied:N       once a NATIVE savepoint's copy wrote N files of its checkpoint
//	                         into its directory, which has no _metadata
//
// Unset: never. The process dies as it would on a SIGKILL from outside: no deregistration,
// no flushing; the next AM attempt finds what a real crash leaves.
const CrashPointEnv = "TIDE_AM_CRASH_AT"

// crashPoint is a parsed CrashPointEnv; the zero value never fires.
type crashPoint struct {
	afterCompleted int64 // checkpoint-completed:N (0: off)
	savepointAcks  int64 // savepoint-acknowledged:N (0: off)
	savepointFiles int64 // savepoint-copied:N (0: off)
}

// parseCrashPoint parses the value of CrashPointEnv ("" is off).
func parseCrashPoint(v string) (crashPoint, error) {
	if v == "" {
		return crashPoint{}, nil
	}
	name, arg, ok := strings.Cut(v, ":")
	n, err := strconv.ParseInt(arg, 10, 64)
	if ok && err == nil && n >= 1 {
		switch name {
		case "checkpoint-completed":
			return crashPoint{afterCompleted: n}, nil
		case "savepoint-acknowledged":
			return crashPoint{savepointAcks: n}, nil
		case "savepoint-copied":
			return crashPoint{savepointFiles: n}, nil
		}
	}
	return crashPoint{}, fmt.Errorf("%s=%q: want checkpoint-completed:N, savepoint-acknowledged:N or savepoint-copied:N with N >= 1", CrashPointEnv, v)
}

// crashIfCompleted kills the process if the point is checkpoint-completed at or below id.
func (c *checkpointCoordinator) crashIfCompleted(id int64) {
	if n := c.crash.afterCompleted; n == 0 || id < n {
		return
	}
	c.log.Error("crash point reached: the AM SIGKILLs itself", "env", CrashPointEnv, "checkpoint", id)
	crash()
}

// crashIfSavepointAcked kills the process if the point is savepoint-acknowledged:N and
// savepoint id now has acks >= N acknowledgements.
func (c *checkpointCoordinator) crashIfSavepointAcked(id int64, acks int) {
	if n := c.crash.savepointAcks; n == 0 || int64(acks) < n {
		return
	}
	c.log.Error("crash point reached: the AM SIGKILLs itself", "env", CrashPointEnv, "savepoint", id, "acknowledgements", acks)
	crash()
}

// crashIfSavepointCopied kills the process if the point is savepoint-copied:N and the
// copy of checkpoint id into a NATIVE savepoint has written files >= N files (any
// goroutine: the point is read-only; c nil: an AM without checkpoint coordinator, in
// tests of the copy alone).
func (c *checkpointCoordinator) crashIfSavepointCopied(id int64, files int) {
	if c == nil {
		return
	}
	if n := c.crash.savepointFiles; n == 0 || int64(files) < n {
		return
	}
	c.log.Error("crash point reached: the AM SIGKILLs itself", "env", CrashPointEnv, "savepoint of checkpoint", id, "files copied", files)
	crash()
}

func crash() {
	_ = syscall.Kill(os.Getpid(), syscall.SIGKILL)
	select {} // the signal is on its way
}
