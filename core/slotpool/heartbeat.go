package slotpool

import "time"

// HeartbeatExpired returns the TaskManagers whose last heartbeat is at least timeout old.
func (p *Pool) HeartbeatExpired(now time.Time, timeout time.Duration) []string {
	var out []string
	for _, tm := range p.sorted {
		if now.Sub(tm.lastHeartbeat) >= timeout {
			out = append(out, tm.id)
		}
	}
	return out
}

// NextHeartbeatDeadline returns the earliest time a TaskManager's heartbeat times out.
func (p *Pool) NextHeartbeatDeadline(timeout time.Duration) (time.Time, bool) {
	var next time.Time
	found := false
	for _, tm := range p.sorted {
		if d := tm.lastHeartbeat.Add(timeout); !found || d.Before(next) {
			next, found = d, true
		}
	}
	return next, found
}
