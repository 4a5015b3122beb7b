package slotpool

import "time"

// HeartbeatExpired returns the TaskManagers whose last heartbeat is at least timeout old.
func (p *Pool) HeartbeatExpired(now time.Time, timeout time.Duration) []string {
	var out []string
	for _, id := range p.ids {
		if now.Sub(p.tms[id].lastHeartbeat) >= timeout {
			out = append(out, id)
		}
	}
	return out
}

// NextHeartbeatDeadline returns the earliest time a TaskManager's heartbeat times out.
func (p *Pool) NextHeartbeatDeadline(timeout time.Duration) (time.Time, bool) {
	var next time.Time
	found := false
	for _, id := range p.ids {
		if d := p.tms[id].lastHeartbeat.Add(timeout); !found || d.Before(next) {
			next, found = d, true
		}
	}
	return next, found
}
