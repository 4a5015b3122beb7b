package am

import (
	"strings"
	"testing"

	"github.com/tidestream/tide/conf"
	"github.com/tidestream/tide/core"
)

func TestActiveWorkerOptions(t *testing.T) {
	tests := []struct {
		name    string
		dyn     []string
		want    core.ActiveWorkers
		wantErr string
	}{
		{"defaults", nil, core.ActiveWorkers{Enabled: true, SlotsPerWorker: 1}, ""},
		{"max slots", []string{"taskmanager.numberOfTaskSlots=2", KeyMaxSlots + "=7"}, core.ActiveWorkers{Enabled: true, SlotsPerWorker: 2, MaxWorkers: 3}, ""},
		{"reactive with max", []string{"execution-mode=reactive", KeyMaxSlots + "=4"}, core.ActiveWorkers{Enabled: true, SlotsPerWorker: 1, MaxWorkers: 4}, ""},
		{"reactive without max", []string{"execution-mode=reactive"}, core.ActiveWorkers{}, KeyMaxSlots},
		// conf refuses a malformed value when the configuration is built, naming the key.
		{"not a number", []string{KeyMaxSlots + "=many"}, core.ActiveWorkers{}, KeyMaxSlots + `: "many" is not an integer`},
		{"below one TaskManager", []string{"taskmanager.numberOfTaskSlots=4", KeyMaxSlots + "=2"}, core.ActiveWorkers{}, "at least taskmanager.numberOfTaskSlots"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c, err := dynConf(tt.dyn)
			var got core.ActiveWorkers
			if err == nil {
				got, err = ActiveWorkerOptions(c)
			}
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("err = %v, want one mentioning %q", err, tt.wantErr)
				}
				return
			}
			if err != nil || got != tt.want {
				t.Fatalf("got %+v, %v; want %+v", got, err, tt.want)
			}
		})
	}
}

// dynConf builds a configuration from -D style key=value entries.
func dynConf(dyn []string) (*conf.Config, error) {
	entries, err := conf.ParseDynamic(dyn)
	if err != nil {
		return nil, err
	}
	c, _, err := conf.Build(entries)
	return c, err
}
