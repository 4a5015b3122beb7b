package yarn

import (
	"context"
	"os"
	"os/user"
	"testing"
	"time"

	"github.com/tidestream/tide/test/hadoop/hadooptest"
)

// requireYARN returns the running MiniYARNCluster. Without one the test skips, unless
// TIDE_REQUIRE_HADOOP=1 (CI): then a missing env file, a stale one or a cluster started
// without YARN fails the test, so CI cannot pass without talking to YARN.
func requireYARN(t *testing.T) *hadooptest.Env {
	t.Helper()
	return hadooptest.RequireYARN(t)
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
