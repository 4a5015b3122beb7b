//go:build statelarge

package e2e

import (
	"testing"
	"time"
)

// TestStateBackendSpillRescaleLarge is TestStateBackendSpillRescale with 10M keys (20M
// keyed state entries with the dedup MapState), on file:// and hdfs:// (make
// state-large; CI runs it after the chaos suite).
func TestStateBackendSpillRescaleLarge(t *testing.T) {
	run := spillRun{records: 10_000_000, rate: "40000", timeout: 40 * time.Minute, managed: "64m"}
	for _, storage := range []string{"file", "hdfs"} {
		t.Run(storage, func(t *testing.T) { testSpillRescale(t, storage, run) })
	}
}
