package restart

import (
	"fmt"
	"time"
)

// Strategy decides whether and when the job restarts after a failure. The scheduler
// calls NotifyFailure(now) for each failure, then CanRestart and Backoff.
type Strategy interface {
	// CanRestart reports whether the failures so far still allow a restart.
	CanRestart() bool
	// Backoff is how long to wait before the restart of the latest failure.
	Backoff() time.Duration
	// NotifyFailure records a failure at now.
	NotifyFailure(now time.Time)
	// Name is the strategy type, e.g. "fixed-delay".
	Name() string
}

// New builds the strategy cfg selects; seed feeds the jitter of exponential-delay, so
// the same seed and failures give the same backoffs.
func New(cfg Config, seed int64) (Strategy, error) {
	if err := cfg.Validate(); err != nil {
		return nil, fmt.Errorf("restart strategy %q: %w", cfg.Type, err)
	}
	switch cfg.Type {
	case TypeNone:
		return noRestart{}, nil
	case TypeFixedDelay:
		return &fixedDelay{attempts: cfg.Attempts, delay: cfg.Delay}, nil
	case TypeFailureRate:
		return &failureRate{max: cfg.MaxFailuresPerInterval, interval: cfg.FailureRateInterval, delay: cfg.Delay}, nil
	default: // TypeExponentialDelay; Validate refused anything else
		return newExponentialDelay(cfg, seed), nil
	}
}

// noRestart never restarts (restart-strategy.type: none).
type noRestart struct{}

func (noRestart) CanRestart() bool        { return false }
func (noRestart) Backoff() time.Duration  { return 0 }
func (noRestart) NotifyFailure(time.Time) {}
func (noRestart) Name() string            { return TypeNone }
