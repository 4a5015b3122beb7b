package am

import (
	"fmt"
	"math"
	"strconv"
	"strings"
)

// TolerableFailedCheckpointsKey is Flink's key for how many consecutive checkpoint
// failures the job tolerates before it fails over.
//
// Semantics follow Flink's CheckpointFailureManager, except when the key is unset: Flink
// then fails the job over on the first counted failure, tide tolerates any number (a
// storage outage is reported in the log, REST and metrics while the job keeps running and
// the first checkpoint after the outage succeeds). Only failures that
// say something about the checkpoint storage or the tasks' ability to checkpoint count:
// a TaskManager declining (its state write failed), the AM failing to write the
// checkpoint's files (_coordinator, _metadata), and expiry after
// execution.checkpointing.timeout. Checkpoints aborted because the attempt was
// cancelled, superseded or lost a subtask do not count (the failover that caused them
// is already under way). A completed checkpoint resets the count. When the count goes
// above the limit, the job fails over (a global failure handled by the restart
// strategy, restoring the latest complete checkpoint) and the count starts again; with
// 0 the first counted failure fails the job over. Below the limit the job keeps
// RUNNING and the next checkpoint is triggered as usual.
const TolerableFailedCheckpointsKey = "execution.checkpointing.tolerable-failed-checkpoints"

// parseTolerableFailedCheckpoints reads TolerableFailedCheckpointsKey from the flat
// configuration; absent means no limit.
func parseTolerableFailedCheckpoints(conf map[string]string) (int, error) {
	raw, ok := conf[TolerableFailedCheckpointsKey]
	if !ok {
		return math.MaxInt, nil
	}
	v := strings.TrimSpace(raw)
	n, err := strconv.Atoi(v)
	if err != nil || n < 0 {
		return 0, fmt.Errorf("%s: %q: expected an integer ≥ 0", TolerableFailedCheckpointsKey, raw)
	}
	return n, nil
}

// failureTolerance counts consecutive counted checkpoint failures against the limit.
type failureTolerance struct {
	limit       int
	consecutive int
}

// failed records one failure; counted says whether its cause counts (see
// TolerableFailedCheckpointsKey). It reports whether the limit is now exceeded, in
// which case the count starts again from zero.
func (f *failureTolerance) failed(counted bool) (consecutive int, exceeded bool) {
	if !counted {
		return f.consecutive, false
	}
	f.consecutive++
	n := f.consecutive
	if n > f.limit {
		f.consecutive = 0
		return n, true
	}
	return n, false
}

// succeeded records a completed checkpoint.
func (f *failureTolerance) succeeded() { f.consecutive = 0 }
