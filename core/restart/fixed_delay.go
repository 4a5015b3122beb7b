package restart

import "time"

// fixedDelay allows a fixed number of restarts, each after the same delay.
type fixedDelay struct {
	attempts int
	delay    time.Duration
	failures int
}

func (s *fixedDelay) CanRestart() bool        { return s.failures <= s.attempts }
func (s *fixedDelay) Backoff() time.Duration  { return s.delay }
func (s *fixedDelay) NotifyFailure(time.Time) { s.failures++ }
func (s *fixedDelay) Name() string            { return TypeFixedDelay }
