package restart

import (
	"math"
	"math/rand/v2"
	"time"
)

// exponentialDelay grows the backoff by a multiplier per failure up to a maximum,
// randomised by ± jitter, and returns to the initial backoff once the job has run for
// resetThreshold without failing. Failures that arrive while the restart of an earlier
// failure is still pending (before its backoff has passed) belong to that restart and
// are not counted again.
type exponentialDelay struct {
	initial, max   time.Duration
	multiplier     float64
	resetThreshold time.Duration
	jitter         float64
	attemptsLimit  int
	rng            *rand.Rand

	// base is the backoff before jitter; backoff the jittered one of the latest failure.
	base, backoff time.Duration
	// attempts counts restarts since the last reset.
	attempts int
	// restartAt is when the restart of the latest counted failure happens; zero before
	// the first failure.
	restartAt time.Time
}

func newExponentialDelay(cfg Config, seed int64) *exponentialDelay {
	return &exponentialDelay{
		initial:        cfg.InitialBackoff,
		max:            cfg.MaxBackoff,
		multiplier:     cfg.Multiplier,
		resetThreshold: cfg.ResetThreshold,
		jitter:         cfg.Jitter,
		attemptsLimit:  cfg.AttemptsBeforeReset,
		rng:            rand.New(rand.NewPCG(uint64(seed), uint64(seed)^0x9e3779b97f4a7c15)),
	}
}

func (s *exponentialDelay) CanRestart() bool       { return s.attempts <= s.attemptsLimit }
func (s *exponentialDelay) Backoff() time.Duration { return s.backoff }
func (s *exponentialDelay) Name() string           { return TypeExponentialDelay }

func (s *exponentialDelay) NotifyFailure(now time.Time) {
	first := s.restartAt.IsZero()
	if !first && now.Before(s.restartAt) {
		return // same restart as the previous failure
	}
	if first || now.Sub(s.restartAt) >= s.resetThreshold {
		s.base = s.initial
		s.attempts = 0
	} else {
		s.base = s.grow(s.base)
	}
	s.attempts++
	s.backoff = s.jittered(s.base)
	s.restartAt = now.Add(s.backoff)
}

// grow multiplies b, capped at max (computed in float to avoid overflow).
func (s *exponentialDelay) grow(b time.Duration) time.Duration {
	next := float64(b) * s.multiplier
	if next >= float64(s.max) {
		return s.max
	}
	return max(time.Duration(next), s.initial)
}

// jittered adds a uniform random offset in [-jitter·b, +jitter·b], keeping the result
// within [0, max].
func (s *exponentialDelay) jittered(b time.Duration) time.Duration {
	if s.jitter == 0 || b == 0 {
		return b
	}
	spread := s.jitter * float64(b)
	v := float64(b) + (s.rng.Float64()*2-1)*spread
	v = math.Min(math.Max(v, 0), float64(s.max))
	return time.Duration(v)
}
