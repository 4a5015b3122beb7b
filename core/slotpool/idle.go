package slotpool

import "time"

// IdleTaskManagers returns the TaskManagers to release at now: those with no reserved slot
// for at least timeout, as long as the remaining usable slots still cover required
// (required < 0: the job wants every slot, release nothing). Candidates go in id order.
func (p *Pool) IdleTaskManagers(now time.Time, timeout time.Duration, required int) []string {
	if required < 0 {
		return nil
	}
	usable, _ := p.Counts()
	var out []string
	for _, tm := range p.sorted {
		if tm.reserved > 0 || now.Sub(tm.idleSince) < timeout {
			continue
		}
		if usable-tm.free < required {
			continue
		}
		usable -= tm.free
		out = append(out, tm.id)
	}
	return out
}

// NextIdleDeadline returns the earliest time an idle TaskManager reaches the idle timeout.
func (p *Pool) NextIdleDeadline(timeout time.Duration) (time.Time, bool) {
	var next time.Time
	found := false
	for _, tm := range p.sorted {
		if tm.reserved > 0 {
			continue
		}
		if d := tm.idleSince.Add(timeout); !found || d.Before(next) {
			next, found = d, true
		}
	}
	return next, found
}
