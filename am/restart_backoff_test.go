package am

import (
	"context"
	"encoding/json"
	"net/http"
	"testing"

	"github.com/tidestream/tide/conf"
	"github.com/tidestream/tide/core"
	"github.com/tidestream/tide/drivers"
	"github.com/tidestream/tide/standalone"
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

// TestKeepTaskManagersOnlyStandalone: the AM keeps TaskManagers (never releases them) with
// the standalone driver only; an active driver that also admits TaskManagers (YARN) does
// not make it keep them.
func TestKeepTaskManagersOnlyStandalone(t *testing.T) {
	tests := []struct {
		name   string
		driver drivers.Driver
		want   bool
	}{
		{"no driver (standalone)", nil, true},
		{"standalone driver", standalone.New(nil), true},
		{"active driver that admits", admittingDriver{}, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := Config{Driver: tt.driver}
			c.withDefaults()
			if c.Options.KeepTaskManagers != tt.want {
				t.Fatalf("KeepTaskManagers = %v, want %v", c.Options.KeepTaskManagers, tt.want)
			}
		})
	}
}

// admittingDriver is an active driver that also admits TaskManagers, as YARN's does.
type admittingDriver struct{ drivers.Driver }

func (admittingDriver) Admit(context.Context, drivers.Worker) error { return nil }
