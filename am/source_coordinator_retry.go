package am

import (
	"errors"
	"slices"
	"time"

	"github.com/tidestream/tide/core"
)

// Every write of a split-assignment log (a registration, an assignment, a returned split,
// no-more-splits, a checkpoint's seal, a compaction) that the storage does not take is
// retried, with a backoff, until one write of that source's log succeeds: each write
// replaces the file with the whole log since the last compaction, so a later write that
// succeeds holds everything an earlier failed one held. Failing the job over instead would
// only restore from the same unreachable storage (a namenode outage, say). Whoever waits
// for a write to be durable (a reader's split assignment, counted in unsent so that no
// checkpoint cuts between the assignment and its reader) waits through the retries; a
// waiter of an attempt that has ended is let go with errAttemptEnded (the restored
// enumerator has its splits again).

// retrySplitLogMin and retrySplitLogMax bound the backoff between writes of a log the
// storage did not take (each write already retries transient storage errors for several
// seconds).
const (
	retrySplitLogMin = 500 * time.Millisecond
	retrySplitLogMax = 15 * time.Second
)

// errAttemptEnded is what a waiter for a log write hears when its attempt ended before
// the write was durable.
var errAttemptEnded = errors.New("the attempt ended before the split assignment log took the write")

// logWaiter waits for a log write of its attempt to be durable.
type logWaiter struct {
	attempt core.AttemptID
	done    func(error)
}

// logRetry is a source's log waiting to be written again.
type logRetry struct {
	backoff time.Duration // until the next retry once armed
	armed   bool          // a retry is scheduled
	waiting []logWaiter   // waiters of the writes that failed
}

// writeLog queues the current log of v; waiters hear nil once a write of v's log is
// durable (this one or a later one).
func (sc *sourceCoordinator) writeLog(v core.VertexID, waiters []logWaiter) {
	sc.wal.write(v, slices.Clone(sc.logs[v]), func(err error) {
		if err != nil {
			sc.logFailed(v, err, waiters)
			return
		}
		if r := sc.retries[v]; r != nil {
			// This write holds everything the failed ones held.
			delete(sc.retries, v)
			waiters = append(waiters, r.waiting...)
		}
		for _, w := range waiters {
			w.done(nil)
		}
	})
}

// logFailed keeps the waiters of the current attempt for the retry of v's log (those of
// an ended attempt are let go) and schedules the retry unless one is.
func (sc *sourceCoordinator) logFailed(v core.VertexID, err error, waiters []logWaiter) {
	r := sc.retries[v]
	if r == nil {
		r = &logRetry{backoff: retrySplitLogMin}
		sc.retries[v] = r
	}
	for _, w := range waiters {
		if w.attempt == sc.attempt {
			r.waiting = append(r.waiting, w)
		} else {
			w.done(errAttemptEnded)
		}
	}
	if r.armed {
		return // the scheduled retry carries this write too
	}
	r.armed = true
	sc.log.Warn("split assignment log not written; the write is retried and readers waiting for it wait",
		"source", v, "waiting", len(r.waiting), "retry_in", r.backoff, "err", err)
	sc.after(r.backoff, func() {
		if sc.retries[v] != r {
			return // a write succeeded meanwhile
		}
		r.armed = false
		waiting := r.waiting
		r.waiting = nil
		r.backoff = min(2*r.backoff, retrySplitLogMax)
		sc.writeLog(v, waiting)
	})
}

// releaseEndedWaiters lets go the waiters of retried writes at a new attempt: their
// splits are in the restored enumerator again. The retries go on (the log still has to
// reach the storage).
func (sc *sourceCoordinator) releaseEndedWaiters() {
	for _, r := range sc.retries {
		waiting := r.waiting
		r.waiting = nil
		for _, w := range waiting {
			w.done(errAttemptEnded)
		}
	}
}
