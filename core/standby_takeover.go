package core

import "time"

// A TaskManager lost in reactive mode normally restarts the job through
// WaitingForResources, which waits out the submission stabilization timeout for a
// replacement (Flink's resource-stabilization-timeout: a window for gaining slots). When
// standby copies (num.standby.replicas) already hold every range the lost TaskManagers
// ran, within one checkpoint of the newest completed one (standbyHolder), on TaskManagers
// still registered, and no worker is on its way, there is nothing to wait for: the
// holders take the ranges over at once (standbyPrevious places them there) and restore
// them from their local copies. A replacement on its way (an active driver asked for one)
// is still waited for, bounded as before, so the job does not restart twice; one that
// registers later is a scale-up like any other, with warm-up.

// standbyCovers reports whether some TaskManager of the last deployed key-group placement
// is gone and every range it held has a ready standby copy on a registered TaskManager.
// It is false without standby copies or keyed state, and when nothing was lost.
func (s *Scheduler) standbyCovers() bool {
	if s.standby == nil {
		return false
	}
	lost := 0
	for _, v := range s.vertices {
		placed := s.lastKeyGroups[v.id]
		for i, tm := range placed.TaskManagers {
			if s.pool.Has(tm) {
				continue
			}
			if s.standbyHolder(v.id, placed.Ranges[i]) == "" {
				return false
			}
			lost++
		}
	}
	return lost > 0
}

// standbyTakeover deploys at once on the slots left when the standby copies cover what
// was lost (see standbyCovers) and nothing is on its way, and reports whether it did.
func (s *Scheduler) standbyTakeover(now time.Time) bool {
	if s.inFlight() > 0 || !s.standbyCovers() {
		return false
	}
	plan, ok := s.planDeployment()
	if !ok {
		return false
	}
	if err := s.deploy(plan); err != nil {
		s.log.Warn("planned slots vanished before reservation", "state", s.state.name(), "err", err)
		return false
	}
	s.log.Info("standby copies hold every lost range: their TaskManagers take over at once", "parallelism", formatParallelism(s.order, plan.Parallelism))
	s.transitionTo(now, newExecuting(s))
	return true
}
