package am

import (
	"time"

	"github.com/tidestream/tide/core"
)

// A bounded job finishes once a checkpoint taken after the end of its input completes
// (FLIP-147's final checkpoint): until then its sinks' last files stay uncommitted. Every
// checkpoint triggered after all source subtasks sent end of input downstream is such a
// checkpoint for every subtask (their barriers follow the end of data on every channel), so
// the AM triggers it as soon as the last source subtask reports its end (PerfInputEnded)
// instead of at the next execution.checkpointing.interval: the job no longer sits idle for
// up to a whole interval at its end. The minimum pause between checkpoints still applies.

// inputEnded notes a source subtask's end of input (loop goroutine).
func (a *AM) inputEnded(attempt core.AttemptID, sub core.SubtaskID) {
	d := a.deployment
	if d == nil || d.attempt != attempt {
		return
	}
	if _, ok := a.src.sources[sub.Vertex]; !ok {
		a.log.Warn("end of input reported by a subtask that is not a source's", "attempt", attempt, "subtask", sub)
		return
	}
	if d.inputEnded == nil {
		d.inputEnded = map[core.SubtaskID]bool{}
	}
	d.inputEnded[sub] = true
	for _, v := range d.vertices {
		if _, ok := a.src.sources[v.Vertex]; !ok {
			continue
		}
		for i := range v.Parallelism {
			if !d.inputEnded[core.SubtaskID{Vertex: v.Vertex, Index: i}] {
				return
			}
		}
	}
	a.log.Info("every source subtask read its whole input; triggering the final checkpoint", "attempt", attempt)
	a.ckpt.inputsEnded(attempt)
}

// inputsEnded: every source subtask of attempt read its whole input. The next checkpoint
// is triggered now, or at once after the one in flight.
func (c *checkpointCoordinator) inputsEnded(attempt core.AttemptID) {
	if attempt != c.attempt {
		return
	}
	c.finalDue = true
	if c.running {
		c.arm(0)
	}
}

// triggered notes that a checkpoint of attempt was triggered: once the sources ended, that
// is the final one.
func (c *checkpointCoordinator) triggered(attempt core.AttemptID) {
	if attempt == c.attempt {
		c.finalDue = false
	}
}

// nextDelay is how long until the next trigger: none while the final checkpoint of the
// current attempt is due, the interval otherwise.
func (c *checkpointCoordinator) nextDelay() time.Duration {
	if c.finalDue {
		return 0
	}
	return c.interval
}
