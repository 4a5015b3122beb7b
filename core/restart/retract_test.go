package restart

import (
	"testing"
	"time"
)

// TestRetractFailure: a failure taken back leaves the strategy as it was before it, so
// losses reclassified as rescales neither grow the backoff nor use up restarts.
func TestRetractFailure(t *testing.T) {
	base := DefaultConfig()
	base.Jitter = 0
	with := func(f func(*Config)) Config { c := base; f(&c); return c }
	tests := []struct {
		name string
		cfg  Config
	}{
		{"fixed-delay", with(func(c *Config) { c.Type = TypeFixedDelay; c.Attempts = 1; c.Delay = time.Second })},
		{"failure-rate", with(func(c *Config) {
			c.Type = TypeFailureRate
			c.MaxFailuresPerInterval = 1
			c.FailureRateInterval = time.Hour
			c.Delay = time.Second
		})},
		{"exponential-delay", with(func(c *Config) {
			c.Type = TypeExponentialDelay
			c.InitialBackoff = time.Second
			c.MaxBackoff = time.Hour
			c.Multiplier = 2
			c.ResetThreshold = time.Hour
			c.AttemptsBeforeReset = 1
		})},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s, err := New(tt.cfg, 1)
			if err != nil {
				t.Fatal(err)
			}
			// Three losses, each first charged as a failure and then taken back.
			for i := range 3 {
				s.NotifyFailure(t0.Add(time.Duration(i) * time.Minute))
				s.RetractFailure()
			}
			// The next real failure is the first one: allowed, after the initial backoff.
			s.NotifyFailure(t0.Add(10 * time.Minute))
			if !s.CanRestart() || s.Backoff() != time.Second {
				t.Fatalf("after 3 retracted failures, a real one: CanRestart %v Backoff %s, want true 1s", s.CanRestart(), s.Backoff())
			}
			// And the one after it is the second: the single allowed restart is used up.
			s.NotifyFailure(t0.Add(20 * time.Minute))
			if s.CanRestart() {
				t.Fatalf("second real failure: CanRestart true, want false (one restart allowed)")
			}
		})
	}
}
