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
		req, err := http.NewRequest(http.MethodPatch, "http://"+c.am.RESTAddr()+tt.path, nil)
		if err != nil {
			t.Fatal(err)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != tt.want {
			t.Fatalf("PATCH %s = %d, want %d", tt.path, resp.StatusCode, tt.want)
		}
	}
	select {
	case res := <-c.result:
		if res.Status != core.StatusCanceled {
			t.Fatalf("job ended %s, want CANCELED", res.Status)
		}
	case <-time.After(time.Minute):
		t.Fatal("job not cancelled")
	}
}
