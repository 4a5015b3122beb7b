package restart

import "time"

// failureRate restarts while at most max failures fall within the last interval
// (measured at the latest failure), each restart after the same delay.
type failureRate struct {
	max      int
	interval time.Duration
	delay    time.Duration
	// recent holds the failure times within interval of the latest, oldest first.
	recent []time.Time
}

func (s *failureRate) CanRestart() bool       { return len(s.recent) <= s.max }
func (s *failureRate) Backoff() time.Duration { return s.delay }
func (s *failureRate) Name() string           { return TypeFailureRate }

func (s *failureRate) NotifyFailure(now time.Time) {
	s.recent = append(s.recent, now)
	keep := 0
	for keep < len(s.recent) && now.Sub(s.recent[keep]) >= s.interval {
		keep++
	}
	s.recent = append(s.recent[:0], s.recent[keep:]...)
	// Once more than max failures are inside the window the job fails; there is no
	// need to remember more than max+1 of them.
	if over := len(s.recent) - (s.max + 1); over > 0 {
		s.recent = append(s.recent[:0], s.recent[over:]...)
	}
}
