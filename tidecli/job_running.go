package tidecli

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"time"

	"github.com/tidestream/tide/api"
)

// A checkpoint or savepoint needs the job RUNNING: the AM refuses one of a job that is
// CREATED (waiting for slots), RESTARTING or over. awaitRunning checks before anything is
// triggered, so the error says the job's state and what to do about it; with an explicit
// --wait it waits (within that bound) for a job that is on its way to RUNNING.

// jobEnded says whether a job in state will not run again under this AM: a terminal one,
// or one being cancelled.
func jobEnded(state string) bool {
	return api.IsTerminal(state) || state == api.StateCancelling
}

// awaitRunning returns nil once job j is RUNNING. A job that has ended is an error at
// once; one on its way (CREATED, INITIALIZING, RESTARTING, FAILING) is waited for until
// deadline when wait is set, else an error that says how to wait. what names the
// operation ("a savepoint").
func (cc *clientCommand) awaitRunning(ctx context.Context, j api.JobOverview, what string, wait bool, deadline time.Time) error {
	state := j.State
	reported := ""
	for {
		if state == api.StateRunning {
			return nil
		}
		if jobEnded(state) {
			return fmt.Errorf("job %s (%s) is %s: %s needs a RUNNING job, and this one will not run again under this AM; start it again (bin/standalone-job.sh or tide run; --fromSavepoint resumes from a savepoint or retained checkpoint) and take %s then",
				j.JID, j.Name, state, what, what)
		}
		why := cc.pendingWhy(ctx, j.JID)
		if !wait {
			return fmt.Errorf("job %s (%s) is %s%s: %s needs it RUNNING; try again once tide list shows it RUNNING, or pass --wait (for example --wait 5m) to wait for it and then for %s",
				j.JID, j.Name, state, why, what, what)
		}
		if state != reported {
			cc.progress("Job %s is %s%s; waiting up to %s for it to run...", j.JID, state, why, time.Until(deadline).Round(time.Second))
			reported = state
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("job %s (%s) is still %s%s after waiting: %s needs it RUNNING; wait longer (--wait) or see tide status %s",
				j.JID, j.Name, state, why, what, j.JID)
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(250 * time.Millisecond):
		}
		s, err := cc.api.JobState(ctx, j.JID)
		if err != nil {
			return err
		}
		state = s
	}
}

// pendingWhy is ", pending: <why>" when the AM says why the job waits (slots missing ...),
// else "".
func (cc *clientCommand) pendingWhy(ctx context.Context, jobID string) string {
	d, err := cc.api.Job(ctx, jobID)
	if err != nil || d.PendingRescale == nil {
		return ""
	}
	return " (pending: " + d.PendingRescale.String() + ")"
}

// triggerRunning is trigger for an operation that needs the job RUNNING: it checks (or,
// with waitSet, waits for) that first (awaitRunning), and with waitSet triggers again when
// the AM refused because the job stopped running in between.
func (cc *clientCommand) triggerRunning(ctx context.Context, j api.JobOverview, need, what, where string, wait time.Duration, waitSet bool,
	start func(ctx context.Context) (string, error),
	poll func(ctx context.Context, triggerID string) (api.AsyncOperation, error)) (api.AsyncOperation, error) {
	deadline := time.Now().Add(wait)
	for {
		if err := cc.awaitRunning(ctx, j, need, waitSet, deadline); err != nil {
			return api.AsyncOperation{}, err
		}
		op, err := cc.trigger(ctx, what, where, max(time.Until(deadline), time.Second), start, poll)
		var se *api.StatusError
		if err == nil || !waitSet || !errors.As(err, &se) || se.Code != http.StatusConflict || time.Now().After(deadline) {
			return op, err
		}
		state, serr := cc.api.JobState(ctx, j.JID)
		if serr != nil || state == api.StateRunning {
			return op, err
		}
		j.State = state
	}
}
