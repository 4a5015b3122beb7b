package yarn

import (
	"context"
	"os"
	"os/user"
	"testing"
	"time"

	"github.com/tidestream/tide/test/hadoop/hadooptest"
)

// requireYARN returns the running MiniYARNCluster, or skips the test with the reason. A
// cluster whose env file says YARN is up is never skipped: if it does not answer, the tests
// fail (so CI with TIDE_REQUIRE_HADOOP=1 cannot pass without talking to YARN).
func requireYARN(t *testing.T) *hadooptest.Env {
	t.Helper()
	env, err := hadooptest.Load()
	if err != nil {
		t.Skipf("YARN mini-cluster not running (start it with test/hadoop/up.sh --yarn): %v", err)
	}
	if env.YARNResourceManager == "" {
		if os.Getenv(hadooptest.RequireEnvVar) == "1" {
			t.Logf("%s=1 but the mini-cluster in %s runs without YARN; skipping the YARN tests", hadooptest.RequireEnvVar, env.Path)
		}
		t.Skipf("the mini-cluster in %s runs without YARN (start it with test/hadoop/up.sh --yarn)", env.Path)
	}
	return env
}

func testUser(t *testing.T) string {
	t.Helper()
	if u := os.Getenv("HADOOP_USER_NAME"); u != "" {
		return u
	}
	u, err := user.Current()
	if err != nil {
		t.Fatalf("current user: %v", err)
	}
	return u.Username
}

// testCtx bounds a cluster test generously: only a hang should ever hit it.
func testCtx(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	t.Cleanup(cancel)
	return ctx
}

func dialTestRM(t *testing.T, env *hadooptest.Env) *ClientRM {
	t.Helper()
	rm, err := DialClientRM(env.YARNResourceManager, testUser(t), nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = rm.Close() })
	return rm
}
