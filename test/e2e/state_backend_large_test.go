//go:build statelarge

package e2e

import (
	"testing"
	"time"
)

// TestStateBackendSpillRescaleLarge is TestStateBackendSpillRescale with 10M keys (20M
// keyed state entries with the dedup MapState), on file:// and hdfs:// (make
// state-large), with 64 MiB of managed memory per TaskManager. Not in .ci/test.sh: the
// file:// run took 19 min on this 2-core machine at load 20-30 (about 5-9k records/s,
// CPU-bound in the keyed operators' Pebble reads and writes), the hdfs:// run as long again.
func TestStateBackendSpillRescaleLarge(t *testing.T) {
	run := spillRun{records: 10_000_000, rate: "40000", timeout: 40 * time.Minute, managed: "64m"}
	for _, storage := range []string{"file", "hdfs"} {
		t.Run(storage, func(t *testing.T) { testSpillRescale(t, storage, run) })
	}
}

// TestStateBackendYARNAMKillLarge is TestStateBackendYARNAMKill with 10M keys (20M keyed
// state entries) and 64 MiB of managed memory per TaskManager (make state-large). It took
// 40 min here at load 16-35 (about 5k records/s, before the pebble write buffer), so it
// stays out of .ci/test.sh like the rest of state-large.
func TestStateBackendYARNAMKillLarge(t *testing.T) {
	testPebbleYARNAMKill(t, yarnPebbleRun{records: 10_000_000, rate: "40000", timeout: 40 * time.Minute, managed: "64m", process: "1g"})
}
