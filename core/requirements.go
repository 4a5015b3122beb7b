package core

import (
	"errors"
	"fmt"
	"time"

	"github.com/tidestream/tide/core/restart"
)

// ErrReactiveRequirements: reactive mode sizes the job from the slots it gets.
var ErrReactiveRequirements = errors.New("cannot change the parallelism of a job running in reactive mode")

// setRequirements validates new bounds for every vertex (FLIP-291 rules: -1 is the default
// bound, 1 ≤ lower ≤ upper ≤ maxParallelism, every vertex present, no unknown vertex) and
// applies them.
func (s *Scheduler) setRequirements(req map[VertexID]Bounds) error {
	var errs []error
	next := make([]vertexInfo, len(s.vertices))
	copy(next, s.vertices)
	for i, v := range next {
		b, ok := req[v.id]
		if !ok {
			errs = append(errs, fmt.Errorf("the request is incomplete, missing job vertex %q", v.id))
			continue
		}
		lower, upper := b.Lower, b.Upper
		if lower == -1 {
			lower = 1
		}
		if upper == -1 {
			upper = v.maxP
		}
		if lower < 1 || upper < lower || upper > v.maxP {
			errs = append(errs, fmt.Errorf("vertex %q: bounds [%d,%d], want 1 <= lower <= upper <= maxParallelism %d", v.id, b.Lower, b.Upper, v.maxP))
			continue
		}
		next[i].lower, next[i].upper = lower, upper
	}
	for id := range req {
		found := false
		for _, v := range s.vertices {
			found = found || v.id == id
		}
		if !found {
			errs = append(errs, fmt.Errorf("unknown job vertex %q", id))
		}
	}
	if err := errors.Join(errs...); err != nil {
		return err
	}
	s.vertices = next
	return nil
}

// UpdateRequirements validates and applies new resource requirements; it is what the
// UpdateResourceRequirements event does, with the error for the REST API (400 on error).
func (s *Scheduler) UpdateRequirements(now time.Time, req map[VertexID]Bounds) ([]Effect, error) {
	s.out = nil
	s.now = now
	if s.opts.Reactive {
		return nil, fmt.Errorf("update resource requirements: %w", ErrReactiveRequirements)
	}
	if s.state.name() == StateFinished {
		return nil, fmt.Errorf("update resource requirements: job is in %s", StateFinished)
	}
	if err := s.setRequirements(req); err != nil {
		return nil, fmt.Errorf("update resource requirements: %w", err)
	}
	s.log.Info("resource requirements updated", "requirements", req)
	if s.state.name() != StateCreated {
		s.declareResources(now)
	}
	s.state.onResourcesChanged(now, TriggerUpdateRequirement)
	s.armGlobalTimers(now)
	out := s.out
	s.out = nil
	return out, nil
}

func (s *Scheduler) onUpdateRequirements(now time.Time, ev UpdateResourceRequirements) {
	out, err := s.UpdateRequirements(now, ev.Requirements)
	if err != nil {
		s.log.Warn("resource requirements refused", "err", err)
		return
	}
	s.out = out
}

// onUpdateOptions applies a live configuration reload. Reactive mode cannot change while
// the job runs; a restart strategy change starts a fresh strategy.
func (s *Scheduler) onUpdateOptions(now time.Time, o Options) {
	if o.Reactive != s.opts.Reactive {
		s.log.Warn("execution-mode change needs a restart of the job; keeping the current mode", "reactive", s.opts.Reactive)
		o.Reactive = s.opts.Reactive
	}
	// Fixed by the deployment, not by the configuration file: a reload keeps them, except
	// the most workers an active driver may start (slotmanager.number-of-slots.max).
	aw := s.opts.ActiveWorkers
	if aw.Enabled && o.ActiveWorkers.Enabled && o.ActiveWorkers.SlotsPerWorker == aw.SlotsPerWorker {
		aw.MaxWorkers = o.ActiveWorkers.MaxWorkers
	}
	o.ActiveWorkers, o.KeepTaskManagers = aw, s.opts.KeepTaskManagers
	if err := o.Validate(); err != nil {
		s.log.Warn("options reload refused; keeping the current options", "err", err)
		return
	}
	if o.Restart != s.opts.Restart {
		strategy, err := restart.New(o.Restart, s.seed)
		if err != nil {
			s.log.Warn("restart strategy reload refused; keeping the current options", "err", err)
			return
		}
		s.restart = strategy
	}
	s.opts = o
	s.log.Info("options reloaded", "min_parallelism_increase", o.MinParallelismIncrease, "cooldown", o.Cooldown,
		"max_workers", o.ActiveWorkers.MaxWorkers)
	s.requestWorkers(now) // a raised maximum asks for more workers at once
	s.state.onResourcesChanged(now, TriggerNewResourceAvailable)
}
