package stream

// splitPuller keeps a reader's split requests: at most one on its way; made ahead
// (RequestSplitAhead) while the reader still has a split to read, so that the AM's answer,
// which waits for the split assignment log to be durable, arrives before the reader runs
// out; and, once a request ahead got nothing, not made ahead again until the reader
// finishes a split. A reader with nothing to read asks with RequestSplit, which the AM
// always serves (or parks until splits come).
type splitPuller struct {
	rc       ReaderContext
	waiting  bool // a request is on its way
	noMore   bool // the enumerator will send no more
	heldBack bool // the last request ahead got nothing
}

// request asks for splits if the reader holds at most ahead splits beyond the one it reads
// (held counts that one too).
func (p *splitPuller) request(held, ahead int) {
	switch {
	case p.waiting || p.noMore || held > ahead:
	case held == 0:
		p.waiting = true
		p.rc.RequestSplit()
	case !p.heldBack:
		p.waiting = true
		p.rc.requestAhead()
	}
}

// added records an answer of n splits; none answers a request ahead that got nothing.
func (p *splitPuller) added(n int) {
	p.waiting = false
	if n == 0 {
		p.heldBack = true
	}
}

// finished records that the reader finished a split: it may ask ahead again.
func (p *splitPuller) finished() { p.heldBack = false }

// ended records the enumerator's "no more splits".
func (p *splitPuller) ended() { p.noMore, p.waiting = true, false }
