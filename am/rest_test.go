package am_test

import (
	"net/http"
	"testing"
	"time"

	"github.com/tidestream/tide/core"
	"github.com/tidestream/tide/examples"
)

func TestRESTCancel(t *testing.T) {
	c := startCluster(t, clusterOptions{job: examples.CheckableCountName,
		args: []string{"--records", "100000000", "--rate", "1000", "--output", t.TempDir()}, ckptDir: t.TempDir(), interval: time.Second})
	c.addTM("tm-a", 2)
	c.waitRunningAt(t, 2)
	tests := []struct {
		path string
		want int
	}{
		{"/jobs/" + jobID + "?mode=stop-with-magic", http.StatusBadRequest},
		{"/jobs/ffffffffffffffffffffffffffffffff?mode=cancel", http.StatusNotFound},
		{"/jobs/" + jobID + "?mode=cancel", http.StatusAccepted},
	}
	for _, tt := range tests {
		if code := c.send(t, http.MethodPatch, tt.path, "", nil); code != tt.want {
			t.Fatalf("PATCH %s = %d, want %d", tt.path, code, tt.want)
		}
	}
	c.waitEnded(t, time.Minute, core.StatusCanceled)
}
