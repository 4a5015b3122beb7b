package am

import (
	"time"

	"github.com/tidestream/tide/api"
	"github.com/tidestream/tide/core"
)

// What this AM made of the deployment a previous AM attempt ran (issue 13): adopted as it
// ran, or restored from the latest checkpoint, and after how long. Shown on
// GET /jobs/:jobid ("lastFailover"), in the metrics lastFailoverAdopted and
// lastFailoverDecisionTime, and in one log line when decided.

// Failover outcomes (api.LastFailover.Outcome).
const (
	failoverPending  = "PENDING"  // reports are being collected
	failoverAdopted  = "ADOPTED"  // the subtasks kept running; nothing restored
	failoverRestored = "RESTORED" // restored from the latest checkpoint
)

// failoverOutcome is the decision about a recovered deployment.
type failoverOutcome struct {
	Outcome           string
	Reason            string // why it was restored ("" when adopted)
	Attempt           core.AttemptID
	Reported, Total   int
	DecidedAfter      time.Duration // from this AM's start
	DecidedAt         time.Time
	AdoptionTimeoutMs int64
}

// noteFailover follows the core's adoption after every step (loop goroutine) and logs
// and publishes its decision once. Without a recovered deployment there is nothing to
// note: this AM started the job.
func (a *AM) noteFailover() {
	if a.recovered == nil || (a.failover != nil && a.failover.Outcome != failoverPending) {
		return
	}
	st := a.sched.Adoption()
	now := a.clock.Now()
	o := &failoverOutcome{Attempt: a.recovered.Attempt, Reported: st.Reported, Total: st.Total,
		AdoptionTimeoutMs: a.cfg.Options.AdoptTimeout.Milliseconds()}
	switch {
	case st.Pending:
		o.Outcome = failoverPending
	case st.Adopted:
		o.Outcome = failoverAdopted
	case st.Fallback != "":
		o.Outcome, o.Reason = failoverRestored, "task adoption abandoned: "+st.Fallback
	default:
		o.Outcome, o.Reason = failoverRestored, "not waited for: "+st.Skipped
	}
	if o.Outcome != failoverPending {
		o.DecidedAfter, o.DecidedAt = now.Sub(a.started), now
		// The dead AM's subtasks are adopted (abandonInFlight took the savepoints they may
		// still write) or cancelled: the other partial savepoints can go for good.
		a.ckpt.settleLostSavepoints(0)
		if o.Outcome == failoverAdopted {
			a.log.Info("AM failover: the subtasks the previous AM ran were adopted; nothing restarted", "attempt", o.Attempt,
				"subtasks", o.Total, "decided_after", o.DecidedAfter)
		} else {
			a.log.Warn("AM failover: the subtasks the previous AM ran were restored from the latest checkpoint", "attempt", o.Attempt,
				"reason", o.Reason, "reported", o.Reported, "total", o.Total, "decided_after", o.DecidedAfter)
		}
	}
	if a.failover != nil && *a.failover == *o {
		return
	}
	a.failover = o
	a.view.setFailover(*o)
}

// lastFailoverBody is the REST form of o (nil: no failover).
func lastFailoverBody(o *failoverOutcome) *api.LastFailover {
	if o == nil {
		return nil
	}
	b := &api.LastFailover{Outcome: o.Outcome, Reason: o.Reason, Attempt: int64(o.Attempt),
		ReportedSubtasks: o.Reported, TotalSubtasks: o.Total, AdoptionTimeout: o.AdoptionTimeoutMs}
	if o.Outcome != failoverPending {
		b.DecidedAfter, b.Timestamp = o.DecidedAfter.Milliseconds(), o.DecidedAt.UnixMilli()
	}
	return b
}

// failoverGauges are the metrics' values: adopted 1 (ADOPTED), 0 (RESTORED), -1 (no
// failover, or still pending); decision time in ms (0 until decided).
func failoverGauges(o *failoverOutcome) (adopted, decisionMs float64) {
	switch {
	case o == nil || o.Outcome == failoverPending:
		return -1, 0
	case o.Outcome == failoverAdopted:
		return 1, float64(o.DecidedAfter.Milliseconds())
	default:
		return 0, float64(o.DecidedAfter.Milliseconds())
	}
}
