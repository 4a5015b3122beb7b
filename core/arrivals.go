package core

import (
	"slices"
	"time"
)

// arrivals is what the scheduler knows to be on its way: TaskManagers named in
// WorkersExpected that have not registered yet (the workers it asked an active driver for
// are counted in Scheduler.pendingWorkers). A deployment waits for them, bounded by the
// submission stabilization timeout, so TaskManagers that start together share one
// deployment instead of each causing a restart.
type arrivals struct {
	expected map[TaskManagerID]bool
	// known: the scheduler can tell when nothing more is coming (an active driver, or the
	// launcher named what it started). Without it (standalone scripts) a deployment waits
	// the whole stabilization window: any TaskManager may be followed by another.
	known bool
}

// onWorkersExpected records TaskManagers on their way.
func (s *Scheduler) onWorkersExpected(now time.Time, ev WorkersExpected) {
	if s.arrivals.expected == nil {
		s.arrivals.expected = make(map[TaskManagerID]bool)
	}
	added := 0
	for _, tm := range ev.TaskManagers {
		if !s.pool.Has(string(tm)) && !s.arrivals.expected[tm] {
			s.arrivals.expected[tm] = true
			added++
		}
	}
	s.arrivals.known = true
	s.log.Info("task managers expected", "added", added, "expected", len(s.arrivals.expected))
	s.state.onResourcesChanged(now, TriggerNewResourceAvailable)
}

// arrived forgets an expected TaskManager that registered or terminated; it reports
// whether it was expected.
func (s *Scheduler) arrived(tm TaskManagerID) bool {
	if !s.arrivals.expected[tm] {
		return false
	}
	delete(s.arrivals.expected, tm)
	return true
}

// inFlight is the number of workers on their way: requested from an active driver or
// expected by name. The two overlap: an active driver serves the scheduler's requests
// with the containers it adopted first (and every registration counts against both), so
// the larger of the two is what is on its way.
func (s *Scheduler) inFlight() int { return max(s.pendingWorkers, len(s.arrivals.expected)) }

// arrivalsKnown reports whether the scheduler can tell that nothing more is coming.
func (s *Scheduler) arrivalsKnown() bool { return s.opts.ActiveWorkers.Enabled || s.arrivals.known }

// allArrived: everything known to be on its way has registered, and the scheduler knows
// what was on its way (so a deployment need not wait out the stabilization window).
func (s *Scheduler) allArrived() bool { return s.arrivalsKnown() && s.inFlight() == 0 }

// ExpectedTaskManagers lists the TaskManagers expected by name that have not registered.
func (s *Scheduler) ExpectedTaskManagers() []TaskManagerID {
	out := make([]TaskManagerID, 0, len(s.arrivals.expected))
	for tm := range s.arrivals.expected {
		out = append(out, tm)
	}
	slices.Sort(out)
	return out
}
