package e2e

import (
	"io"
	"net/http"
	"strconv"
	"testing"

	"github.com/tidestream/tide/examples"
	"github.com/tidestream/tide/internal/testkit"
)

// TestTaskManagerPprof: with taskmanager.debug.pprof.address set, a running TaskManager
// serves a CPU profile and its allocation profile over loopback, as go tool pprof reads them.
func TestTaskManagerPprof(t *testing.T) {
	port := testkit.FreePort(t)
	addr := "127.0.0.1:" + strconv.Itoa(port)
	dyn := append(reactive(t.TempDir(), "1 s"), "taskmanager.debug.pprof.address="+addr)
	c := startCluster(t, examples.TopSpeedWindowingName, []string{"--cars", "8"}, 1, dyn)
	waitRunningAt(t, c, jobID(t, c), 1)
	for _, path := range []string{"/debug/pprof/profile?seconds=1", "/debug/pprof/allocs"} {
		resp, err := http.Get("http://" + addr + path)
		if err != nil {
			t.Fatalf("GET %s: %v", path, err)
		}
		body, err := io.ReadAll(resp.Body)
		resp.Body.Close()
		if err != nil || resp.StatusCode != http.StatusOK {
			t.Fatalf("GET %s: %s, %v", path, resp.Status, err)
		}
		// A pprof profile is a gzipped protocol buffer.
		if len(body) < 2 || body[0] != 0x1f || body[1] != 0x8b {
			t.Fatalf("GET %s: %d bytes, not a gzipped profile: %.50q", path, len(body), body)
		}
	}
}
