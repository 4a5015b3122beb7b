//go:build statelarge

package e2e

import (
	"testing"
	"time"
)

// largeKeys is how many distinct keys the large runs hold in keyed state when they
// rescale or lose their AM: the dedup step's MapState then has one entry per number seen
// (10M), the count-and-sum step one per key (10M). The jobs read largeExtra numbers
// more (keys 0..largeExtra-1 are counted twice), which they process across the rescales
// and the kill, so every restore restores all 10M keys and the job still has work to
// do; the output (10M lines) is checked exactly.
const (
	largeKeys  = 10_000_000
	largeExtra = 2_000_000
)

// largeRun is the spill run of make state-large-all: incremental checkpoints every 3 s (a
// full checkpoint reads and writes every entry: with 2M keys a CPU profile already showed
// 15% of a TaskManager's CPU in back-to-back full checkpoints, a share that grows with
// the state), 64 MiB of managed memory per TaskManager.
var largeRun = spillRun{records: largeKeys + largeExtra, keys: largeKeys, hold: largeKeys, rate: "20000",
	timeout: 40 * time.Minute, managed: "64m", interval: "3 s", incremental: true}

// TestStateBackendSpillRescaleLarge is TestStateBackendSpillRescale at 10M keys, on
// file:// and hdfs:// (make state-large-all; CI's make state-large leaves it out, see the
// Makefile): on hdfs:// it took 30+ min at load 30-35 (7.5k records/s before the rescale):
// the rescale 2 -> 5 waits until 10M distinct keys are in a completed checkpoint, and
// 5 -> 3 follows with at least as many.
func TestStateBackendSpillRescaleLarge(t *testing.T) {
	for _, storage := range []string{"file", "hdfs"} {
		t.Run(storage, func(t *testing.T) { testSpillRescale(t, storage, largeRun) })
	}
}

// TestStateBackendYARNAMKillLarge is TestStateBackendYARNAMKill at 10M keys (make
// state-large, in CI; 35.5 min at load 14-36, 7.2k records/s, before the wait below): the AM is
// SIGKILLed once 10M distinct keys are in a completed checkpoint, and AM attempt 2
// restores them. Checkpoints every 3 s: an incremental checkpoint flushes the memtables,
// and yarnSettings' 300 ms would make three small L0 tables a second to compact. The job
// waits for both TaskManager containers before its first deployment: started at
// parallelism 1 when the first registered (7 s before the second), it rescaled to 2 with
// sticky key groups 0-95 and 96-127 (within the balance factor of 2) and one TaskManager
// did three quarters of the work until the AM kill, 22 minutes.
func TestStateBackendYARNAMKillLarge(t *testing.T) {
	testPebbleYARNAMKill(t, yarnPebbleRun{records: largeKeys + largeExtra, keys: largeKeys, hold: largeKeys, rate: "20000",
		timeout: 40 * time.Minute, managed: "64m", process: "1g", interval: "3 s",
		extra: []string{"-Djobmanager.adaptive-scheduler.submission.resource-stabilization-timeout=60 s"}})
}
