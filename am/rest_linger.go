package am

import (
	"context"
	"time"

	"github.com/tidestream/tide/core"
)

// RESTShutdownGraceKey bounds how long the AM keeps serving its REST API after the job
// ended. Flink's application mode shuts the cluster down as soon as the job ends
// (execution.shutdown-on-application-finish: true, the default) or never (false), so a
// client polling a stop-with-savepoint may find nobody to answer; tide keeps REST up,
// read-only (job status, checkpoints, the results of triggered operations; every change
// is answered 409), until every awaited result has been read, at most this long.
const RESTShutdownGraceKey = "rest.shutdown.grace-period" // conf.RestShutdownGracePeriod

// restLingerPoll paces looking whether the awaited results have been read.
const restLingerPoll = 50 * time.Millisecond

// lingerREST keeps the REST server up after the job reached terminal status res (the
// loop has ended: the REST API only reads) until no awaited operation result is unread
// (see triggers.unread), cfg.RESTShutdownGrace has passed, or ctx ends. A suspended job
// is not over and a new AM takes over: no wait then.
func (a *AM) lingerREST(ctx context.Context, res Result) {
	grace := a.cfg.RESTShutdownGrace
	if a.rest == nil || grace <= 0 || res.Status == core.StatusSuspended {
		return
	}
	a.api.triggers.jobEnded()
	n := a.api.triggers.unread()
	if n == 0 {
		return
	}
	a.log.Info("job ended: the REST API stays up, read-only, until the results clients wait for are read",
		"unread", n, "atMost", grace, "key", RESTShutdownGraceKey, "rest", a.RESTAddr())
	deadline := time.NewTimer(grace)
	defer deadline.Stop()
	tick := time.NewTicker(restLingerPoll)
	defer tick.Stop()
	for {
		select {
		case <-ctx.Done():
			a.log.Info("REST API closing: the AM was told to stop", "unread", a.api.triggers.unread())
			return
		case <-deadline.C:
			a.log.Warn("REST API closing: operation results not read within the grace period", "unread", a.api.triggers.unread(),
				"after", grace, "key", RESTShutdownGraceKey)
			return
		case <-tick.C:
			if a.api.triggers.unread() == 0 {
				a.log.Info("REST API closing: every awaited operation result has been read")
				return
			}
		}
	}
}
