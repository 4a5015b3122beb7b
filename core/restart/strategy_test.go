package restart

import (
	"errors"
	"strings"
	"testing"
	"time"
)

var t0 = time.Date(2024, 1, 1, 0, 0, 0, 0, time.UTC)

// failure is one NotifyFailure call at t0+at with the answers expected afterwards.
type failure struct {
	at          time.Duration
	wantRestart bool
	wantBackoff time.Duration
}

func run(t *testing.T, s Strategy, steps []failure) {
	t.Helper()
	for i, f := range steps {
		s.NotifyFailure(t0.Add(f.at))
		if got := s.CanRestart(); got != f.wantRestart {
			t.Errorf("failure %d at %s: CanRestart = %v, want %v", i, f.at, got, f.wantRestart)
		}
		if f.wantRestart {
			if got := s.Backoff(); got != f.wantBackoff {
				t.Errorf("failure %d at %s: Backoff = %s, want %s", i, f.at, got, f.wantBackoff)
			}
		}
	}
}

func TestStrategies(t *testing.T) {
	base := DefaultConfig()
	with := func(f func(*Config)) Config { c := base; f(&c); return c }
	tests := []struct {
		name     string
		cfg      Config
		wantName string
		steps    []failure
	}{
		{
			name:     "none never restarts",
			cfg:      with(func(c *Config) { c.Type = TypeNone }),
			wantName: "none",
			steps:    []failure{{0, false, 0}},
		},
		{
			name:     "fixed-delay: attempts then stop",
			cfg:      with(func(c *Config) { c.Type = TypeFixedDelay; c.Attempts = 3; c.Delay = 5 * time.Second }),
			wantName: "fixed-delay",
			steps: []failure{
				{0, true, 5 * time.Second}, {time.Minute, true, 5 * time.Second},
				{2 * time.Minute, true, 5 * time.Second}, {3 * time.Minute, false, 0},
			},
		},
		{
			name:     "fixed-delay with zero attempts fails at once",
			cfg:      with(func(c *Config) { c.Type = TypeFixedDelay; c.Attempts = 0 }),
			wantName: "fixed-delay",
			steps:    []failure{{0, false, 0}},
		},
		{
			name: "failure-rate: at most N failures within the interval",
			cfg: with(func(c *Config) {
				c.Type = TypeFailureRate
				c.MaxFailuresPerInterval = 2
				c.FailureRateInterval = time.Minute
				c.Delay = 3 * time.Second
			}),
			wantName: "failure-rate",
			steps: []failure{
				{0, true, 3 * time.Second},
				{30 * time.Second, true, 3 * time.Second},
				// the first failure left the window exactly at 60 s
				{60 * time.Second, true, 3 * time.Second},
				{70 * time.Second, false, 0},
			},
		},
		{
			name: "failure-rate: spaced failures never exhaust",
			cfg: with(func(c *Config) {
				c.Type = TypeFailureRate
				c.MaxFailuresPerInterval = 1
				c.FailureRateInterval = time.Minute
				c.Delay = time.Second
			}),
			wantName: "failure-rate",
			steps: []failure{
				{0, true, time.Second}, {61 * time.Second, true, time.Second},
				{122 * time.Second, true, time.Second}, {150 * time.Second, false, 0},
			},
		},
		{
			name: "exponential-delay without jitter: grows, caps, resets",
			cfg: with(func(c *Config) {
				c.InitialBackoff = time.Second
				c.MaxBackoff = 5 * time.Second
				c.Multiplier = 2
				c.Jitter = 0
				c.ResetThreshold = 10 * time.Minute
			}),
			wantName: "exponential-delay",
			steps: []failure{
				{0, true, time.Second},
				{10 * time.Second, true, 2 * time.Second},
				{20 * time.Second, true, 4 * time.Second},
				{30 * time.Second, true, 5 * time.Second},
				{40 * time.Second, true, 5 * time.Second},
				// restart at 45 s; running 10 min without failure resets the backoff
				{45*time.Second + 10*time.Minute, true, time.Second},
			},
		},
		{
			name: "exponential-delay: failures during a pending restart count once",
			cfg: with(func(c *Config) {
				c.InitialBackoff = 10 * time.Second
				c.MaxBackoff = time.Minute
				c.Multiplier = 2
				c.Jitter = 0
				c.AttemptsBeforeReset = 2
			}),
			wantName: "exponential-delay",
			steps: []failure{
				{0, true, 10 * time.Second},
				{5 * time.Second, true, 10 * time.Second}, // restart still pending: merged
				{9 * time.Second, true, 10 * time.Second}, // merged
				{10 * time.Second, true, 20 * time.Second},
				{40 * time.Second, false, 0}, // third attempt exceeds attempts-before-reset 2
			},
		},
		{
			name: "exponential-delay: attempts-before-reset starts over after a reset",
			cfg: with(func(c *Config) {
				c.InitialBackoff = time.Second
				c.MaxBackoff = time.Minute
				c.Multiplier = 2
				c.Jitter = 0
				c.AttemptsBeforeReset = 1
				c.ResetThreshold = time.Hour
			}),
			wantName: "exponential-delay",
			steps: []failure{
				{0, true, time.Second},
				{time.Second + time.Hour, true, time.Second},
				{2*time.Second + time.Hour, false, 0},
			},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s, err := New(tt.cfg, 1)
			if err != nil {
				t.Fatalf("New: %v", err)
			}
			if s.Name() != tt.wantName {
				t.Errorf("Name = %q, want %q", s.Name(), tt.wantName)
			}
			run(t, s, tt.steps)
		})
	}
}

func TestExponentialJitter(t *testing.T) {
	cfg := DefaultConfig()
	cfg.InitialBackoff = 10 * time.Second
	cfg.MaxBackoff = 100 * time.Second
	cfg.Multiplier = 2
	cfg.Jitter = 0.25
	backoffs := func(seed int64) []time.Duration {
		s, err := New(cfg, seed)
		if err != nil {
			t.Fatal(err)
		}
		var out []time.Duration
		at := t0
		for range 8 {
			s.NotifyFailure(at)
			out = append(out, s.Backoff())
			at = at.Add(s.Backoff() + time.Second)
		}
		return out
	}
	a, b, c := backoffs(7), backoffs(7), backoffs(8)
	bases := []time.Duration{10, 20, 40, 80, 100, 100, 100, 100}
	differs := false
	for i := range a {
		if a[i] != b[i] {
			t.Fatalf("same seed gave different backoffs: %v vs %v", a, b)
		}
		if a[i] != c[i] {
			differs = true
		}
		base := bases[i] * time.Second
		lo, hi := base-base/4, min(base+base/4, cfg.MaxBackoff)
		if a[i] < lo || a[i] > hi {
			t.Errorf("backoff %d = %s, want within [%s, %s]", i, a[i], lo, hi)
		}
	}
	if !differs {
		t.Errorf("seeds 7 and 8 gave identical backoffs %v", a)
	}
}

func TestConfigValidate(t *testing.T) {
	base := DefaultConfig()
	with := func(f func(*Config)) Config { c := base; f(&c); return c }
	tests := []struct {
		name string
		cfg  Config
		want []string
	}{
		{"default", base, nil},
		{"unknown type", with(func(c *Config) { c.Type = "sometimes" }), []string{`type "sometimes"`}},
		{"empty type", with(func(c *Config) { c.Type = "" }), []string{`type ""`}},
		{"fixed-delay negative", with(func(c *Config) { c.Type = TypeFixedDelay; c.Attempts = -1; c.Delay = -time.Second }),
			[]string{"attempts -1", "delay -1s"}},
		{"failure-rate zeros", with(func(c *Config) { c.Type = TypeFailureRate; c.MaxFailuresPerInterval = 0; c.FailureRateInterval = 0 }),
			[]string{"max-failures-per-interval 0", "failure-rate-interval 0s"}},
		{"exponential all wrong", with(func(c *Config) {
			c.InitialBackoff = time.Minute
			c.MaxBackoff = time.Second
			c.Multiplier = 0.5
			c.ResetThreshold = 0
			c.Jitter = 1.5
			c.AttemptsBeforeReset = 0
		}), []string{"max-backoff 1s", "backoff-multiplier 0.5", "reset-backoff-threshold 0s", "jitter-factor 1.5", "attempts-before-reset-backoff 0"}},
		{"unused fields are not checked", with(func(c *Config) { c.Type = TypeNone; c.Attempts = -5; c.Multiplier = -1 }), nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := tt.cfg.Validate()
			if len(tt.want) == 0 {
				if err != nil {
					t.Fatalf("Validate = %v, want nil", err)
				}
				return
			}
			if !errors.Is(err, ErrInvalidConfig) {
				t.Fatalf("Validate = %v, want ErrInvalidConfig", err)
			}
			for _, w := range tt.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("Validate = %q, want it to mention %q", err, w)
				}
			}
			if _, nerr := New(tt.cfg, 0); !errors.Is(nerr, ErrInvalidConfig) {
				t.Errorf("New accepted an invalid config: %v", nerr)
			}
		})
	}
}
