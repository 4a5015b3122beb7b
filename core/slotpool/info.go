package slotpool

import "time"

// Info describes one TaskManager for the REST API.
type Info struct {
	ID            string
	Node          string
	Slots         int // slots offered at registration
	Free          int
	Reserved      int
	Registered    time.Time
	LastHeartbeat time.Time
	Blocked       bool
}

// Infos describes every TaskManager, sorted by id.
func (p *Pool) Infos() []Info {
	out := make([]Info, 0, len(p.sorted))
	for _, tm := range p.sorted {
		out = append(out, Info{ID: tm.id, Node: tm.node, Slots: len(tm.slots), Free: tm.free, Reserved: tm.reserved,
			Registered: tm.registered, LastHeartbeat: tm.lastHeartbeat, Blocked: p.blocked(tm.node)})
	}
	return out
}
