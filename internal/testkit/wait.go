package testkit

import "time"

// WaitDeadline bounds every WaitFor; it only guards against hangs and is far beyond
// what any condition needs on a loaded machine.
const WaitDeadline = 90 * time.Second

// pollInterval is the pause between two checks of a condition.
const pollInterval = 10 * time.Millisecond

// Fataler is the part of testing.TB that WaitFor uses.
type Fataler interface {
	Helper()
	Fatalf(format string, args ...any)
}

// WaitFor polls cond until it holds, failing t after WaitDeadline with what and the
// last error cond returned.
func WaitFor(t Fataler, what string, cond func() (bool, error)) {
	t.Helper()
	waitFor(t, what, WaitDeadline, cond)
}

func waitFor(t Fataler, what string, deadline time.Duration, cond func() (bool, error)) {
	t.Helper()
	end := time.Now().Add(deadline)
	var last error
	for {
		ok, err := cond()
		if ok {
			return
		}
		last = err
		if !time.Now().Before(end) {
			break
		}
		time.Sleep(pollInterval)
	}
	t.Fatalf("timed out after %s waiting for %s (last error: %v)", deadline, what, last)
}
