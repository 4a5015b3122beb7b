// Package e2e runs the stock tide binary's KafkaCount job on local clusters (real AM and
// TaskManager processes) against the broker of test/kafka.
package e2e

import (
	"fmt"
	"os"
	"testing"

	"github.com/tidestream/tide/internal/testkit"
	"github.com/tidestream/tide/standalone"
	"github.com/tidestream/tide/test/kafka/kafkatest"
)

var tideBin string

func TestMain(m *testing.M) {
	if _, err := kafkatest.Load(); err != nil && os.Getenv(kafkatest.RequireEnvVar) != "1" {
		// No broker: every test skips at kafkatest.Require; building tide would be wasted.
		os.Exit(m.Run())
	}
	testkit.MainWithTide(m, testkit.TideBuild{Bin: &tideBin})
}

func startLocal(t testing.TB, opts standalone.LocalOptions) *standalone.LocalCluster {
	t.Helper()
	return testkit.StartLocal(t, tideBin, opts)
}

func restOf(c *standalone.LocalCluster) testkit.Getter {
	return testkit.RESTGetter("http://" + c.RESTAddress())
}

func waitCheckpointIn(t testing.TB, c *standalone.LocalCluster, id string, attempt int64) {
	t.Helper()
	testkit.WaitFor(t, fmt.Sprintf("a checkpoint of attempt %d", attempt), func() (bool, error) {
		var s testkit.CheckpointStats
		if err := restOf(c)("/jobs/"+id+"/checkpoints", &s); err != nil {
			return false, err
		}
		return s.Latest.Completed != nil && s.Latest.Completed.Attempt >= attempt, nil
	})
}

// latestCompleted is the id of the job's latest completed checkpoint (0: none).
func latestCompleted(t testing.TB, c *standalone.LocalCluster, id string) int64 {
	t.Helper()
	var s testkit.CheckpointStats
	if err := restOf(c)("/jobs/"+id+"/checkpoints", &s); err != nil {
		t.Fatal(err)
	}
	if s.Latest.Completed == nil {
		return 0
	}
	return s.Latest.Completed.ID
}

func readFile(path string) (string, error) {
	b, err := os.ReadFile(path)
	return string(b), err
}
