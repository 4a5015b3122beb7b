package e2e

import (
	"testing"

	"github.com/tidestream/tide/internal/testkit"
	"github.com/tidestream/tide/standalone"
)

// startAMRestartCluster starts a local cluster of tms TaskManagers and an AM running job
// with args and the settings dyn, on free ports it keeps for the next attempts (see
// testkit.AMRestarter).
func startAMRestartCluster(t *testing.T, dyn []string, job string, args []string, tms int) (*standalone.LocalCluster, *testkit.AMRestarter) {
	t.Helper()
	r := testkit.StartAMRestartCluster(t, tideBin, standalone.LocalOptions{Dynamic: dyn, JobName: job, JobArgs: args, TaskManagers: tms})
	return r.C, r
}
