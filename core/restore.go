package core

import (
	"slices"
	"time"

	"github.com/tidestream/tide/core/blocklist"
)

// Restored is what an earlier AM attempt of the job persisted beside its checkpoints and
// the next attempt hands back before Start: the operator's blocklist (each entry with its
// absolute start and end), the finished rescales and the exception history.
type Restored struct {
	Blocked    []blocklist.BlockedNode
	Rescales   []Rescale
	Exceptions []ExceptionEntry
	// Deployment is the deployment the earlier attempt ran (nil: none or unknown); with
	// Options.AdoptTimeout > 0 the scheduler waits for its subtasks to be reported and
	// adopts them (see adoption.go).
	Deployment *RecoveredDeployment
}

// Restore takes over what an earlier attempt persisted; call it once, before Start.
// Blocked nodes keep their end (a permanent block stays permanent; one whose end has
// passed by now is dropped), histories keep their newest entries up to the configured
// sizes and rescale ids continue above the restored ones. It returns the blocked nodes
// skipped as expired or invalid, for the caller to log.
func (s *Scheduler) Restore(now time.Time, r Restored) (skipped []blocklist.BlockedNode) {
	for _, n := range r.Blocked {
		if n.Start.IsZero() || n.Validate(now) != nil {
			skipped = append(skipped, n)
			continue
		}
		s.blocked.Add(now, n)
	}
	if len(r.Blocked) > len(skipped) {
		s.log.Info("blocklist restored", "nodes", s.blocked.Len(), "skipped", len(skipped))
	}
	rescales := slices.Clone(r.Rescales)
	if over := len(rescales) - s.opts.RescaleHistorySize; over > 0 {
		rescales = rescales[over:]
	}
	s.history.done = append(rescales, s.history.done...)
	// Rescale ids and attempts go on from the newest the earlier AM used (attempts from
	// its deployment too, or from its histories alone when it died between deployments).
	for _, rs := range r.Rescales {
		s.history.nextID = max(s.history.nextID, rs.ID)
		s.attempt = max(s.attempt, rs.Attempt)
	}
	exceptions := slices.Clone(r.Exceptions)
	if over := len(exceptions) - s.opts.ExceptionHistorySize; over > 0 {
		exceptions = exceptions[over:]
	}
	s.exceptions = append(exceptions, s.exceptions...)
	for _, e := range r.Exceptions {
		s.attempt = max(s.attempt, e.Attempt)
	}
	if r.Deployment != nil {
		s.recoverDeployment(r.Deployment)
	}
	return skipped
}

// recoverDeployment takes over the deployment an earlier AM ran: attempts go on from its
// number (the next deployment, adopted or not, is not attempt 1 again), its subtasks are
// placed where they ran, and it is adopted when it can be (unless an adoption is pending).
func (s *Scheduler) recoverDeployment(r *RecoveredDeployment) {
	s.attempt = max(s.attempt, r.Attempt)
	s.preferPlacement(r.Placement)
	if s.adopt != nil {
		return
	}
	var why string
	if s.adopt, why = s.newAdoption(r); s.adopt == nil {
		s.adoptSkipped = why
		s.log.Info("recovered deployment not adopted; the job restores from the latest checkpoint", "reason", why)
		return
	}
	s.log.Info("waiting for the TaskManagers to report the subtasks they kept running", "attempt", r.Attempt,
		"run", r.Run, "subtasks", s.adopt.total, "timeout", s.opts.AdoptTimeout)
}

// LatestException is the newest entry of the exception history; the AM compares it to
// tell whether the history changed.
func (s *Scheduler) LatestException() (ExceptionEntry, bool) {
	if len(s.exceptions) == 0 {
		return ExceptionEntry{}, false
	}
	return s.exceptions[len(s.exceptions)-1], true
}

// Placement is the TaskManager each subtask index of every slot-sharing group runs on in
// the current deployment (between deployments: in the last one), for the AM to persist;
// the next AM attempt hands it back through RecoveredDeployment.Placement.
func (s *Scheduler) Placement() map[string][]string {
	p := s.lastPlacement
	if s.dep != nil {
		p = s.dep.placement
	}
	out := make(map[string][]string, len(p))
	for g, tms := range p {
		out[g] = slices.Clone(tms)
	}
	return out
}

// preferPlacement makes a recovered deployment's placement the one the next deployment
// keeps subtasks on where it can (only before this scheduler deployed anything itself).
func (s *Scheduler) preferPlacement(p map[string][]string) {
	if len(p) == 0 || s.dep != nil || s.lastPlacement != nil {
		return
	}
	s.lastPlacement = make(map[string][]string, len(p))
	for g, tms := range p {
		s.lastPlacement[g] = slices.Clone(tms)
	}
}
