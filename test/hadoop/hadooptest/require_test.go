package hadooptest

import (
	"bufio"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/tidestream/tide/internal/testkit"
)

// fakeControl answers every control command with "ok", as a live launcher does.
func fakeControl(t *testing.T) string {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ln.Close() })
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			_, _ = bufio.NewReader(c).ReadString('\n')
			_, _ = c.Write([]byte("ok\n"))
			c.Close()
		}
	}()
	return ln.Addr().String()
}

// TestRequireFailsInsteadOfSkipping: without a cluster (no env file, or one without YARN
// for RequireYARN) a test skips, and fails under TIDE_REQUIRE_HADOOP=1, naming the cause.
func TestRequireFailsInsteadOfSkipping(t *testing.T) {
	dir := t.TempDir()
	noYARN := filepath.Join(dir, "env-no-yarn")
	env := fmt.Sprintf("HDFS_NAMENODE=127.0.0.1:1\nHADOOP_CONF_DIR=%s\nHADOOP_CONTROL=%s\n", dir, fakeControl(t))
	if err := os.WriteFile(noYARN, []byte(env), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, tt := range []struct {
		name, envFile, require string
		call                   func(testing.TB) *Env
		wantFail, wantSkip     string
	}{
		{"missing env file, required", filepath.Join(dir, "absent"), "1", func(tb testing.TB) *Env { return Require(tb) }, "TIDE_REQUIRE_HADOOP=1 requires it", ""},
		{"missing env file, optional", filepath.Join(dir, "absent"), "0", func(tb testing.TB) *Env { return Require(tb) }, "", "make hadoop-up"},
		{"no YARN, required", noYARN, "1", func(tb testing.TB) *Env { return RequireYARN(tb) }, "runs without YARN", ""},
		{"no YARN, optional", noYARN, "", func(tb testing.TB) *Env { return RequireYARN(tb) }, "", "runs without YARN"},
		{"HDFS only, required", noYARN, "1", func(tb testing.TB) *Env { return Require(tb) }, "", ""},
	} {
		t.Run(tt.name, func(t *testing.T) {
			t.Setenv(EnvFileVar, tt.envFile)
			t.Setenv(RequireEnvVar, tt.require)
			end := testkit.Catch(t, func(tb testing.TB) { tt.call(tb) })
			if (tt.wantFail == "") != (end.Failed == "") || !strings.Contains(end.Failed, tt.wantFail) {
				t.Errorf("failed with %q, want %q", end.Failed, tt.wantFail)
			}
			if (tt.wantSkip == "") != (end.Skipped == "") || !strings.Contains(end.Skipped, tt.wantSkip) {
				t.Errorf("skipped with %q, want %q", end.Skipped, tt.wantSkip)
			}
		})
	}
}
