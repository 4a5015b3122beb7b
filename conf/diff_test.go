package conf

import (
	"reflect"
	"testing"
)

func TestDiff(t *testing.T) {
	build := func(text string) *Config {
		t.Helper()
		c, _, err := Build(fileEntries(t, text))
		if err != nil {
			t.Fatal(err)
		}
		return c
	}
	tests := []struct {
		name     string
		old, new string
		want     []Change
	}{
		{"identical", "rest.port: 1\n", "rest.port: 1\n", nil},
		{"reformatted values are equal", "heartbeat.timeout: 60s\nrestart-strategy.type: FixedDelay\n", "heartbeat.timeout: 1 min\nrestart-strategy.type: fixed-delay\n", nil},
		{"set to its default is no change", "", "rest.port: 8081\n", nil},
		{"alias to new name is no change", "jobmanager.adaptive-scheduler.scaling-interval.min: 5 s\n", "jobmanager.adaptive-scheduler.executing.cooldown-after-rescaling: 5 s\n", nil},
		{"reloadable and restart", "jobmanager.adaptive-scheduler.min-parallelism-increase: 1\n",
			"jobmanager.adaptive-scheduler.min-parallelism-increase: 3\nrest.port: 9000\n",
			[]Change{
				{Key: "jobmanager.adaptive-scheduler.min-parallelism-increase", Old: "1", New: "3", Reloadable: true},
				{Key: "rest.port", Old: "8081", New: "9000"},
			}},
		{"unset optional", "execution.checkpointing.interval: 10 s\n", "",
			[]Change{{Key: "execution.checkpointing.interval", Old: "10 s", New: "", Reloadable: true}}},
		{"unknown keys", "my.key: a\n", "my.key: b\nother.key: c\n",
			[]Change{{Key: "my.key", Old: "a", New: "b"}, {Key: "other.key", Old: "", New: "c"}}},
		{"secrets are redacted", "rest.auth.token: one\n", "rest.auth.token: two\n",
			[]Change{{Key: "rest.auth.token", Old: "******", New: "******"}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := build(tt.new).Diff(build(tt.old))
			if !reflect.DeepEqual(got, tt.want) {
				t.Fatalf("got %+v\nwant %+v", got, tt.want)
			}
		})
	}
}
