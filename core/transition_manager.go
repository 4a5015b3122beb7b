package core

import "time"

// phase of the transition manager (Flink 2.0's DefaultStateTransitionManager):
//
//	Cooldown ──► Idling ◄──────────────┐
//	    │          │ change (sufficient)│ trigger, not sufficient
//	    └──────────┴──► Stabilizing ──► Stabilized
//	                        │ trigger (desired)   │ trigger (sufficient)
//	                        └────► Transitioning ◄┘
type phase string

const (
	phaseCooldown      phase = "Cooldown"
	phaseIdling        phase = "Idling"
	phaseStabilizing   phase = "Stabilizing"
	phaseStabilized    phase = "Stabilized"
	phaseTransitioning phase = "Transitioning"
)

// stmContext is what the transition manager needs from the state that owns it.
type stmContext interface {
	hasDesiredResources() bool
	hasSufficientResources() bool
	// cooldownWaived: the change at hand ends the cooldown early (resources the last
	// deployment had to go without have arrived).
	cooldownWaived() bool
	transitionToSubsequentState(now time.Time)
}

// stmParams are read at every use, so a live options reload applies at once.
type stmParams struct {
	cooldown, stabilization, maxTriggerDelay time.Duration
	// noTimedTrigger: only explicit triggers (checkpoints) evaluate Stabilizing.
	noTimedTrigger bool
}

// transitionManager decides when a change of resources turns into a state transition.
type transitionManager struct {
	s      *Scheduler
	ctx    stmContext
	params func() stmParams

	phase        phase
	seq          uint64 // bumped on every phase change; timers of older phases do nothing
	start        time.Time
	firstChange  time.Time // zero: no change seen (Cooldown) / phase start
	evalArmed    bool
	stabilizeDue time.Time
}

func newTransitionManager(s *Scheduler, ctx stmContext, now time.Time, params func() stmParams) *transitionManager {
	m := &transitionManager{s: s, ctx: ctx, params: params, start: now}
	if c := params().cooldown; c > 0 {
		m.setPhase(phaseCooldown)
		m.s.arm(now, timerCooldown, c, m.seq)
	} else {
		m.setPhase(phaseIdling)
	}
	return m
}

func (m *transitionManager) setPhase(p phase) {
	m.phase = p
	m.seq++
	m.evalArmed = false
	m.s.log.Debug("transition manager phase", "phase", p, "state", m.s.state.name())
}

// onChange: resources or requirements changed.
func (m *transitionManager) onChange(now time.Time) {
	switch m.phase {
	case phaseCooldown:
		if m.ctx.cooldownWaived() {
			m.s.log.Info("cooldown waived: resources the deployment went without have arrived")
			m.firstChange = time.Time{}
			m.setPhase(phaseIdling)
			m.onChange(now)
			return
		}
		if m.firstChange.IsZero() && m.ctx.hasSufficientResources() {
			m.firstChange = now
		}
	case phaseIdling:
		if m.ctx.hasSufficientResources() {
			m.enterStabilizing(now, now)
		}
	case phaseStabilizing:
		m.scheduleEvaluation(now)
	}
}

// onTrigger: a moment to act (completed checkpoint, max delay, or at once when rescales
// do not wait for checkpoints).
func (m *transitionManager) onTrigger(now time.Time) {
	switch m.phase {
	case phaseStabilizing:
		if m.ctx.hasDesiredResources() {
			m.transition(now)
		}
	case phaseStabilized:
		if m.ctx.hasSufficientResources() {
			m.transition(now)
		} else {
			m.setPhase(phaseIdling)
		}
	}
}

// reset returns to Idling after a transition attempt that could not be carried out.
func (m *transitionManager) reset() {
	m.setPhase(phaseIdling)
	m.firstChange = time.Time{}
}

func (m *transitionManager) transition(now time.Time) {
	m.setPhase(phaseTransitioning)
	m.ctx.transitionToSubsequentState(now)
}

func (m *transitionManager) enterStabilizing(now, firstChange time.Time) {
	m.setPhase(phaseStabilizing)
	m.firstChange = firstChange
	m.stabilizeDue = firstChange.Add(m.params().stabilization)
	if !m.stabilizeDue.After(now) {
		m.enterStabilized(now)
		return
	}
	seq := m.seq
	m.scheduleEvaluation(now)
	if m.seq == seq { // still stabilizing: no transition happened
		m.s.arm(now, timerStabilization, m.stabilizeDue.Sub(now), m.seq)
	}
}

func (m *transitionManager) enterStabilized(now time.Time) {
	m.setPhase(phaseStabilized)
	p := m.params()
	if p.noTimedTrigger {
		return
	}
	due := m.firstChange.Add(p.maxTriggerDelay)
	if !due.After(now) {
		m.onTrigger(now)
		return
	}
	m.s.arm(now, timerTriggerEvaluation, due.Sub(now), m.seq)
}

// scheduleEvaluation arms (at most one) evaluation maxTriggerDelay after the change.
func (m *transitionManager) scheduleEvaluation(now time.Time) {
	p := m.params()
	if p.noTimedTrigger || m.evalArmed {
		return
	}
	if p.maxTriggerDelay <= 0 {
		m.onTrigger(now)
		return
	}
	m.evalArmed = true
	m.s.arm(now, timerTriggerEvaluation, p.maxTriggerDelay, m.seq)
}

// onTimer handles the manager's own timers; it reports false for timers it does not own.
func (m *transitionManager) onTimer(now time.Time, t timerEntry) bool {
	switch t.kind {
	case timerCooldown, timerStabilization, timerTriggerEvaluation:
	default:
		return false
	}
	if t.phase != m.seq {
		m.s.stale("transition manager timer", "kind", t.kind, "phase", m.phase)
		return true
	}
	switch t.kind {
	case timerCooldown:
		if !m.firstChange.IsZero() && m.ctx.hasSufficientResources() {
			m.enterStabilizing(now, m.firstChange)
		} else {
			m.firstChange = time.Time{}
			m.setPhase(phaseIdling)
			// A change that was not sufficient during the cooldown may be now.
			m.onChange(now)
		}
	case timerStabilization:
		m.enterStabilized(now)
	case timerTriggerEvaluation:
		m.evalArmed = false
		m.onTrigger(now)
	}
	return true
}
