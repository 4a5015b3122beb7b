package am

import (
	"math"
	"strings"
	"testing"
)

func TestParseTolerableFailedCheckpoints(t *testing.T) {
	tests := []struct {
		conf    map[string]string
		want    int
		wantErr string
	}{
		// Unset: no limit (Flink would fail over on the first failure).
		{conf: nil, want: math.MaxInt},
		{conf: map[string]string{"other": "1"}, want: math.MaxInt},
		{conf: map[string]string{TolerableFailedCheckpointsKey: "3"}, want: 3},
		{conf: map[string]string{TolerableFailedCheckpointsKey: " 0 "}, want: 0},
		{conf: map[string]string{TolerableFailedCheckpointsKey: "-1"}, wantErr: `"-1": expected an integer ≥ 0`},
		{conf: map[string]string{TolerableFailedCheckpointsKey: "many"}, wantErr: `"many"`},
		{conf: map[string]string{TolerableFailedCheckpointsKey: ""}, wantErr: TolerableFailedCheckpointsKey},
	}
	for _, tt := range tests {
		got, err := parseTolerableFailedCheckpoints(tt.conf)
		if tt.wantErr != "" {
			if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
				t.Errorf("parse(%v) = %d, %v; want an error containing %q", tt.conf, got, err, tt.wantErr)
			}
			continue
		}
		if err != nil || got != tt.want {
			t.Errorf("parse(%v) = %d, %v; want %d", tt.conf, got, err, tt.want)
		}
	}
}

func FuzzParseTolerableFailedCheckpoints(f *testing.F) {
	for _, s := range []string{"0", "7", "-1", "x", " 2", "99999999999999999999"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		n, err := parseTolerableFailedCheckpoints(map[string]string{TolerableFailedCheckpointsKey: s})
		if err == nil && n < 0 {
			t.Fatalf("parse(%q) = %d without error", s, n)
		}
		if err != nil && !strings.Contains(err.Error(), TolerableFailedCheckpointsKey) {
			t.Fatalf("error %q does not name the key", err)
		}
	})
}

func TestFailureTolerance(t *testing.T) {
	// Each step: counted failure (f), uncounted failure (u) or success (s); want is
	// the step indexes at which the job fails over.
	tests := []struct {
		limit int
		steps string
		want  []int
	}{
		{limit: 0, steps: "f", want: []int{0}},
		{limit: 0, steps: "uuu", want: nil},
		{limit: 0, steps: "ff", want: []int{0, 1}},
		{limit: 2, steps: "ff", want: nil},
		{limit: 2, steps: "fff", want: []int{2}},
		{limit: 2, steps: "ffsff", want: nil},
		{limit: 2, steps: "ffufs", want: []int{3}},
		{limit: 1, steps: "ffff", want: []int{1, 3}},
	}
	for _, tt := range tests {
		ft := failureTolerance{limit: tt.limit}
		var got []int
		for i, st := range tt.steps {
			switch st {
			case 'f', 'u':
				if _, exceeded := ft.failed(st == 'f'); exceeded {
					got = append(got, i)
				}
			case 's':
				ft.succeeded()
			}
		}
		if len(got) != len(tt.want) || (len(got) > 0 && !equalInts(got, tt.want)) {
			t.Errorf("limit %d steps %q: failovers at %v, want %v", tt.limit, tt.steps, got, tt.want)
		}
	}
}

func equalInts(a, b []int) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}
