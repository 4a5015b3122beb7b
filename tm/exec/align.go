package exec

// aligner aligns checkpoint barriers over the inputs of one subtask. Once an input delivered
// barrier n it is blocked (its reader waits, so the records behind the barrier stay in the
// channel) until every input delivered n or closed; an input whose producer finished (end
// of partition) counts as aligned, since no barrier can come from it any more. An input
// whose producer only ended its data still forwards barriers and is waited for.
type aligner struct {
	id        int64 // barrier being aligned; 0: none
	ts        int64
	delivered []bool
	closed    []bool
}

// alignStep is what the subtask must do after a barrier or a close.
type alignStep struct {
	// aligned is the checkpoint to snapshot now (0: none yet), with its barrier timestamp.
	aligned, ts int64
	// superseded is an older checkpoint abandoned because a newer barrier arrived while it
	// was aligning (0: none); the subtask declines it.
	superseded int64
	// resume lists the blocked inputs to unblock (after aligned or superseded).
	resume []int
}

func newAligner(n int) *aligner {
	return &aligner{delivered: make([]bool, n), closed: make([]bool, n)}
}

// barrier records barrier id (timestamp ts) from input i.
func (a *aligner) barrier(i int, id, ts int64) alignStep {
	var step alignStep
	switch {
	case a.id == 0 || id > a.id:
		if a.id != 0 {
			step.superseded = a.id
			step.resume = a.release()
		}
		a.id, a.ts = id, ts
	case id < a.id: // superseded already: let the input go on at once
		step.resume = append(step.resume, i)
		return step
	}
	a.delivered[i] = true
	return a.complete(step)
}

// close records that input i's producer finished.
func (a *aligner) close(i int) alignStep {
	a.closed[i] = true
	a.delivered[i] = false
	return a.complete(alignStep{})
}

// aligning returns the checkpoint being aligned (0: none).
func (a *aligner) aligning() int64 { return a.id }

func (a *aligner) complete(step alignStep) alignStep {
	if a.id == 0 {
		return step
	}
	for i := range a.delivered {
		if !a.delivered[i] && !a.closed[i] {
			return step
		}
	}
	step.aligned, step.ts = a.id, a.ts
	step.resume = append(step.resume, a.release()...)
	a.id, a.ts = 0, 0
	return step
}

// release unblocks every input that delivered the current barrier.
func (a *aligner) release() []int {
	var out []int
	for i, d := range a.delivered {
		if d {
			a.delivered[i] = false
			if !a.closed[i] {
				out = append(out, i)
			}
		}
	}
	return out
}
