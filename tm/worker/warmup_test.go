package worker

import "testing"

func TestWarmupsWanted(t *testing.T) {
	for _, c := range []struct {
		conf map[string]string
		want bool
	}{
		{map[string]string{}, false},
		{map[string]string{"state.warmup.timeout": "0 s", "num.standby.replicas": "0"}, false},
		{map[string]string{"state.warmup.timeout": "0"}, false},
		{map[string]string{"state.warmup.timeout": "0ms"}, false},
		{map[string]string{"state.warmup.timeout": "2 min"}, true},
		{map[string]string{"state.warmup.timeout": "500"}, true},
		{map[string]string{"num.standby.replicas": "1"}, true},
		{map[string]string{"num.standby.replicas": " 10 "}, true},
	} {
		if got := warmupsWanted(c.conf); got != c.want {
			t.Errorf("warmupsWanted(%v) = %v, want %v", c.conf, got, c.want)
		}
	}
}
