package am

import (
	"encoding/json"
	"net/http"
	"testing"

	"github.com/tidestream/tide/conf"
	"github.com/tidestream/tide/core"
)

// TestJobManagerConfigShowsRestartBackoff: the README promises that GET /jobmanager/config
// shows how the failure backoff grows and when it resets; a reactive job shows them with
// their defaults.
func TestJobManagerConfigShowsRestartBackoff(t *testing.T) {
	r := startRESTAM(t, restAMOptions{reactive: true})
	code, _, body := r.call(t, "GET", "/jobmanager/config", "")
	if code != http.StatusOK {
		t.Fatalf("GET /jobmanager/config = %d: %s", code, body)
	}
	var entries []struct{ Key, Value string }
	if err := json.Unmarshal(body, &entries); err != nil {
		t.Fatal(err)
	}
	got := map[string]string{}
	for _, e := range entries {
		got[e.Key] = e.Value
	}
	for key, want := range map[string]string{
		"restart-strategy.exponential-delay.backoff-multiplier":      "1.5",
		"restart-strategy.exponential-delay.reset-backoff-threshold": "1 h",
		"restart-strategy.exponential-delay.initial-backoff":         "1 s",
		"restart-strategy.exponential-delay.max-backoff":             "1 min",
	} {
		if got[key] != want {
			t.Errorf("%s = %q in /jobmanager/config, want %q", key, got[key], want)
		}
	}
}

// TestReactiveStabilizationDefault: conf's reactive default and the core's agree.
func TestReactiveStabilizationDefault(t *testing.T) {
	c, _, err := conf.Load("", []string{"execution-mode=reactive"})
	if err != nil {
		t.Fatal(err)
	}
	if got := SchedulerOptions(c).SubmissionStabilization; got != core.ReactiveSubmissionStabilization {
		t.Fatalf("reactive submission stabilization = %v, want core's %v", got, core.ReactiveSubmissionStabilization)
	}
}
