package am

import (
	"strings"
	"testing"
	"time"

	"github.com/tidestream/tide/core"
)

// TestMetricsScrape starts the REST endpoint and scrapes /metrics: every declared metric
// is exported under its Prometheus name (tally's separator and sanitizer in place).
func TestMetricsScrape(t *testing.T) {
	r := startRESTAM(t, restAMOptions{})
	if code, _, body := r.call(t, "PUT", "/blocklist/nodes/n1", `{"action":"MARK_BLOCKED","cause":"c"}`); code != 201 {
		t.Fatalf("block = %d %s", code, body)
	}
	var text string
	waitUntil(t, "every metric and numBlockedNodes 1 in /metrics", func() bool {
		code, h, body := r.call(t, "GET", "/metrics", "")
		if code != 200 || !strings.HasPrefix(h.Get("Content-Type"), "text/plain") {
			t.Fatalf("GET /metrics = %d %s %s", code, h.Get("Content-Type"), body)
		}
		text = string(body)
		for _, d := range allMetrics {
			if d == metricParallelism {
				continue // exported once a vertex runs (see the integration test)
			}
			if !strings.Contains(text, metricName(d)) {
				return false
			}
		}
		return strings.Contains(text, "tide_jobmanager_numBlockedNodes 1")
	})
	if !strings.Contains(text, `job_id="`+testJobID+`"`) {
		t.Errorf("job metrics lack the job_id label:\n%s", text)
	}
}

// metricName is d's Prometheus name.
func metricName(d metricDef) string {
	if d.Scope == jobScope {
		return "tide_jobmanager_job_" + d.Name
	}
	return "tide_jobmanager_" + d.Name
}

func TestMetricDefsUnique(t *testing.T) {
	seen := map[string]bool{}
	for _, d := range allMetrics {
		if seen[d.Name] || d.Help == "" {
			t.Errorf("metric %s declared twice or without help", d.Name)
		}
		seen[d.Name] = true
	}
}

func TestJobTimes(t *testing.T) {
	t0 := time.Unix(1000, 0)
	at := func(s int) time.Time { return t0.Add(time.Duration(s) * time.Second) }
	tests := []struct {
		name                    string
		status                  core.JobStatus
		entered                 map[core.JobStatus]time.Time
		now                     int
		up, down, restartingSec int
	}{
		{"waiting", core.StatusCreated, map[core.JobStatus]time.Time{core.StatusCreated: at(0)}, 5, 0, 0, 0},
		{"running", core.StatusRunning, map[core.JobStatus]time.Time{core.StatusCreated: at(0), core.StatusRunning: at(2)}, 10, 8, 0, 0},
		{"restarting", core.StatusRestarting, map[core.JobStatus]time.Time{core.StatusRunning: at(2), core.StatusRestarting: at(7)}, 10, 0, 3, 3},
		{"failing then restarting", core.StatusRestarting, map[core.JobStatus]time.Time{core.StatusRunning: at(2), core.StatusFailing: at(6), core.StatusRestarting: at(7)}, 10, 0, 4, 3},
		{"running again", core.StatusRunning, map[core.JobStatus]time.Time{core.StatusRunning: at(9), core.StatusRestarting: at(7)}, 10, 1, 0, 2},
		{"finished", core.StatusFinished, map[core.JobStatus]time.Time{core.StatusRunning: at(2), core.StatusFinished: at(8)}, 10, 0, 0, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			up, down, restarting := jobTimes(tt.status, tt.entered, at(tt.now))
			if up != time.Duration(tt.up)*time.Second || down != time.Duration(tt.down)*time.Second || restarting != time.Duration(tt.restartingSec)*time.Second {
				t.Fatalf("jobTimes = %v %v %v, want %ds %ds %ds", up, down, restarting, tt.up, tt.down, tt.restartingSec)
			}
		})
	}
}
