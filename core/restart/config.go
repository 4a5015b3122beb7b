package restart

import (
	"errors"
	"fmt"
	"math"
	"time"
)

// Strategy type names, as in Flink's restart-strategy.type.
const (
	TypeNone             = "none"
	TypeFixedDelay       = "fixed-delay"
	TypeExponentialDelay = "exponential-delay"
	TypeFailureRate      = "failure-rate"
)

// ErrInvalidConfig is wrapped by every Config.Validate error.
var ErrInvalidConfig = errors.New("invalid restart strategy configuration")

// Config selects and parameterises a strategy. Only the fields of the selected Type
// are read and validated.
type Config struct {
	// Type is none, fixed-delay, exponential-delay or failure-rate.
	Type string
	// Attempts is the number of restarts fixed-delay allows.
	Attempts int
	// Delay is the pause before a restart for fixed-delay and failure-rate.
	Delay time.Duration
	// InitialBackoff, MaxBackoff, Multiplier, ResetThreshold, Jitter and
	// AttemptsBeforeReset configure exponential-delay.
	InitialBackoff, MaxBackoff time.Duration
	Multiplier                 float64
	ResetThreshold             time.Duration
	Jitter                     float64
	AttemptsBeforeReset        int
	// MaxFailuresPerInterval and FailureRateInterval configure failure-rate.
	MaxFailuresPerInterval int
	FailureRateInterval    time.Duration
}

// DefaultConfig returns Flink's defaults with exponential-delay selected (Flink's choice
// when checkpointing is on): fixed-delay 1 attempt after 1 s; exponential-delay 1 s
// initial, 1 min max, ×1.5, reset after 1 h, jitter 0.1, 2147483647 attempts before reset;
// failure-rate 1 failure per 1 min, 1 s delay.
func DefaultConfig() Config {
	return Config{
		Type:                   TypeExponentialDelay,
		Attempts:               1,
		Delay:                  time.Second,
		InitialBackoff:         time.Second,
		MaxBackoff:             time.Minute,
		Multiplier:             1.5,
		ResetThreshold:         time.Hour,
		Jitter:                 0.1,
		AttemptsBeforeReset:    math.MaxInt32,
		MaxFailuresPerInterval: 1,
		FailureRateInterval:    time.Minute,
	}
}

// Validate checks the fields of the selected strategy and reports every problem.
func (c Config) Validate() error {
	var errs []error
	bad := func(format string, args ...any) {
		errs = append(errs, fmt.Errorf("%w: %s", ErrInvalidConfig, fmt.Sprintf(format, args...)))
	}
	switch c.Type {
	case TypeNone:
	case TypeFixedDelay:
		if c.Attempts < 0 {
			bad("fixed-delay attempts %d: expected ≥ 0", c.Attempts)
		}
		if c.Delay < 0 {
			bad("fixed-delay delay %s: expected ≥ 0", c.Delay)
		}
	case TypeFailureRate:
		if c.MaxFailuresPerInterval < 1 {
			bad("failure-rate max-failures-per-interval %d: expected ≥ 1", c.MaxFailuresPerInterval)
		}
		if c.FailureRateInterval <= 0 {
			bad("failure-rate failure-rate-interval %s: expected > 0", c.FailureRateInterval)
		}
		if c.Delay < 0 {
			bad("failure-rate delay %s: expected ≥ 0", c.Delay)
		}
	case TypeExponentialDelay:
		if c.InitialBackoff < 0 {
			bad("exponential-delay initial-backoff %s: expected ≥ 0", c.InitialBackoff)
		}
		if c.MaxBackoff < c.InitialBackoff {
			bad("exponential-delay max-backoff %s: expected ≥ initial-backoff %s", c.MaxBackoff, c.InitialBackoff)
		}
		if !(c.Multiplier >= 1) || math.IsInf(c.Multiplier, 0) {
			bad("exponential-delay backoff-multiplier %v: expected a finite number ≥ 1", c.Multiplier)
		}
		if c.ResetThreshold <= 0 {
			bad("exponential-delay reset-backoff-threshold %s: expected > 0", c.ResetThreshold)
		}
		if !(c.Jitter >= 0 && c.Jitter <= 1) {
			bad("exponential-delay jitter-factor %v: expected 0 ≤ jitter ≤ 1", c.Jitter)
		}
		if c.AttemptsBeforeReset < 1 {
			bad("exponential-delay attempts-before-reset-backoff %d: expected ≥ 1", c.AttemptsBeforeReset)
		}
	default:
		bad("type %q: expected %s, %s, %s or %s", c.Type, TypeNone, TypeFixedDelay, TypeExponentialDelay, TypeFailureRate)
	}
	return errors.Join(errs...)
}
