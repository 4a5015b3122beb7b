package yarn

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"time"

	"github.com/tidestream/tide/api"
	"github.com/tidestream/tide/yarn/yarnpb"
)

// Progress is what Follow reports along the way.
type Progress struct {
	State       yarnpb.YarnApplicationStateProto
	TrackingURL string // the AM's REST address, once it registered
	JobState    string // the job's status from the AM's REST API ("" before)
	// Failure is the newest entry of the job's exception history (nil: none, or before
	// the AM answered).
	Failure *api.ExceptionEntry
	Report  *yarnpb.ApplicationReportProto
}

// failureChanged reports whether the newest failure differs between p and q.
func (p Progress) failureChanged(q Progress) bool {
	if p.Failure == nil || q.Failure == nil {
		return (p.Failure == nil) != (q.Failure == nil)
	}
	return p.Failure.Timestamp != q.Failure.Timestamp || p.Failure.Attempt != q.Failure.Attempt
}

// FollowOptions tunes Follow.
type FollowOptions struct {
	// Poll is the interval between reports (default 250 ms).
	Poll time.Duration
	// UntilRunning returns as soon as the job is RUNNING (tide run --detached).
	UntilRunning bool
	// OnChange is called whenever the application's or the job's state changes, or the
	// job's newest failure.
	OnChange func(Progress)
	// HTTP reaches the AM's REST API (default a client with a 5 s timeout).
	HTTP *http.Client
}

// ErrApplicationFailed: the application ended with a final status other than SUCCEEDED.
var ErrApplicationFailed = errors.New("YARN application did not succeed")

// Follow polls the application until the job is RUNNING (UntilRunning) or the
// application ends. It returns the last progress; an application that ended with
// any final status other than SUCCEEDED gives ErrApplicationFailed with the diagnostics.
func Follow(ctx context.Context, rm *ClientRM, app *yarnpb.ApplicationIdProto, o FollowOptions) (Progress, error) {
	if o.Poll <= 0 {
		o.Poll = 250 * time.Millisecond
	}
	if o.HTTP == nil {
		o.HTTP = &http.Client{Timeout: 5 * time.Second}
	}
	var last Progress
	for {
		r, err := rm.GetApplicationReport(ctx, app)
		if err != nil {
			return last, err
		}
		p := Progress{State: r.GetYarnApplicationState(), Report: r, TrackingURL: AMURL(r), JobState: last.JobState, Failure: last.Failure}
		if p.State == yarnpb.YarnApplicationStateProto_RUNNING && p.TrackingURL != "" {
			if st, failure, err := jobState(ctx, o.HTTP, p.TrackingURL); err == nil {
				p.JobState, p.Failure = st, failure
			}
		}
		if p.State != last.State || p.JobState != last.JobState || p.TrackingURL != last.TrackingURL || p.failureChanged(last) {
			if o.OnChange != nil {
				o.OnChange(p)
			}
		}
		last = p
		switch p.State {
		case yarnpb.YarnApplicationStateProto_FINISHED, yarnpb.YarnApplicationStateProto_FAILED, yarnpb.YarnApplicationStateProto_KILLED:
			if r.GetFinalApplicationStatus() != yarnpb.FinalApplicationStatusProto_APP_SUCCEEDED {
				return p, fmt.Errorf("%s ended %v with final status %v: %s: %w", ApplicationIDString(app), p.State,
					r.GetFinalApplicationStatus(), r.GetDiagnostics(), ErrApplicationFailed)
			}
			return p, nil
		}
		if o.UntilRunning && p.JobState == "RUNNING" {
			return p, nil
		}
		t := time.NewTimer(o.Poll)
		select {
		case <-ctx.Done():
			t.Stop()
			return p, fmt.Errorf("following %s: %w", ApplicationIDString(app), context.Cause(ctx))
		case <-t.C:
		}
	}
}

// AMURL is the AM's own REST address: the tracking URL it registered (the report's
// trackingUrl is the RM's web proxy); "" before the AM registered.
func AMURL(r *yarnpb.ApplicationReportProto) string {
	u := r.GetOriginalTrackingUrl()
	if u == "" || u == "N/A" {
		return ""
	}
	if !strings.Contains(u, "://") {
		u = "http://" + u
	}
	return strings.TrimRight(u, "/")
}

// jobState asks the AM's REST API for its job's state and newest failure (nil: none),
// through the public client.
func jobState(ctx context.Context, c *http.Client, base string) (string, *api.ExceptionEntry, error) {
	cl, err := api.NewClient(api.Config{Address: base, HTTPClient: c})
	if err != nil {
		return "", nil, err
	}
	jobs, err := cl.Jobs(ctx)
	if err != nil {
		return "", nil, err
	}
	if len(jobs) == 0 {
		return "", nil, fmt.Errorf("the AM at %s runs no job", base)
	}
	e, ok, _, err := cl.NewestException(ctx, jobs[0].JID)
	if err != nil || !ok {
		return jobs[0].State, nil, nil // the state alone is still worth reporting
	}
	return jobs[0].State, &e, nil
}

// Ended says whether an application in state s has ended (FINISHED, FAILED or KILLED).
func Ended(s yarnpb.YarnApplicationStateProto) bool {
	switch s {
	case yarnpb.YarnApplicationStateProto_FINISHED, yarnpb.YarnApplicationStateProto_FAILED, yarnpb.YarnApplicationStateProto_KILLED:
		return true
	}
	return false
}

// FinalStatusString is a final status as YARN's own tools print it (SUCCEEDED, FAILED,
// KILLED, UNDEFINED), without the protocol's APP_ prefix.
func FinalStatusString(s yarnpb.FinalApplicationStatusProto) string {
	return strings.TrimPrefix(s.String(), "APP_")
}
