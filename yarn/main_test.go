package yarn

import (
	"os"
	"testing"

	"go.uber.org/goleak"
)

// TestMain doubles as the ApplicationMaster of TestClusterManagedAM: YARN launches this test
// binary in the AM container with amTestEnv set.
func TestMain(m *testing.M) {
	if os.Getenv(amTestEnv) == "1" {
		os.Exit(runTestAM())
	}
	goleak.VerifyTestMain(m)
}
