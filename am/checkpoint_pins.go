package am

import "sync"

// checkpointPins keeps checkpoints that are being read (copied into a savepoint) from
// being deleted under state.checkpoints.num-retained: a deletion of a pinned checkpoint
// is put off until its last pin goes. Safe for concurrent use.
type checkpointPins struct {
	mu       sync.Mutex
	pins     map[int64]int
	deferred map[int64]bool
}

// pin holds checkpoint id until the matching unpin.
func (p *checkpointPins) pin(id int64) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.pins == nil {
		p.pins = map[int64]int{}
	}
	p.pins[id]++
}

// unpin releases one pin of id; it reports true when the last pin went and a deletion of
// id was put off meanwhile: the caller deletes it now.
func (p *checkpointPins) unpin(id int64) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.pins[id] == 0 {
		return false
	}
	p.pins[id]--
	if p.pins[id] > 0 {
		return false
	}
	delete(p.pins, id)
	if !p.deferred[id] {
		return false
	}
	delete(p.deferred, id)
	return true
}

// deferDelete reports whether id is pinned; if so its deletion is recorded for unpin.
func (p *checkpointPins) deferDelete(id int64) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.pins[id] == 0 {
		return false
	}
	if p.deferred == nil {
		p.deferred = map[int64]bool{}
	}
	p.deferred[id] = true
	return true
}
