package am

import (
	"context"
	"errors"
	"fmt"
	"net/http"

	"github.com/tidestream/tide/api"
	"github.com/tidestream/tide/core"
)

// ResourceRequirements is GET /jobs/:jobid/resource-requirements.
func (a *AM) ResourceRequirements(ctx context.Context) (api.ResourceRequirements, error) {
	var req map[core.VertexID]core.Bounds
	if err := a.inspect(ctx, func() { req = a.sched.Requirements() }); err != nil {
		return nil, unavailable(err)
	}
	out := make(api.ResourceRequirements, len(req))
	for v, b := range req {
		out[string(v)] = api.VertexRequirements{Parallelism: api.Bounds{LowerBound: b.Lower, UpperBound: b.Upper}}
	}
	return out, nil
}

// SetResourceRequirements applies new bounds of every vertex (PUT
// /jobs/:jobid/resource-requirements, FLIP-291) through the scheduler's rescale logic. 400
// lists every problem, 409 answers a second update while one is being applied, or a job in
// reactive mode.
func (a *AM) SetResourceRequirements(ctx context.Context, reqs api.ResourceRequirements, remote string) error {
	req := make(map[core.VertexID]core.Bounds, len(reqs))
	for id, r := range reqs {
		req[core.VertexID(id)] = core.Bounds{Lower: r.Parallelism.LowerBound, Upper: r.Parallelism.UpperBound}
	}
	if !a.api.updating.CompareAndSwap(false, true) {
		return statusErrorf(http.StatusConflict, "Another update of the resource requirements of job %s is in progress: retry when it is done", a.cfg.JobID)
	}
	defer a.api.updating.Store(false)
	var uerr error
	err := a.mutate(ctx, func() { uerr = a.updateRequirements(req) })
	if err != nil {
		return mutateError(err, fmt.Sprintf("Job %s has terminated: its resource requirements can no longer change", a.cfg.JobID))
	}
	switch {
	case errors.Is(uerr, core.ErrReactiveRequirements):
		return statusErrorf(http.StatusConflict, "Job %s runs in reactive mode (execution-mode: reactive): its parallelism follows "+
			"the TaskManagers it gets, up to each vertex's maxParallelism. Add or stop TaskManagers to rescale it, or restart "+
			"the job without execution-mode: reactive to set resource requirements", a.cfg.JobID)
	case uerr != nil:
		return statusError(http.StatusBadRequest, flattenErrors(uerr)...)
	}
	a.log.Info("resource requirements updated over REST", "requirements", req, "remote", remote)
	return nil
}

// updateRequirements hands new bounds to the scheduler and carries out its effects in the
// order step would (loop goroutine).
func (a *AM) updateRequirements(req map[core.VertexID]core.Bounds) error {
	effects, err := a.sched.UpdateRequirements(a.clock.Now(), req)
	if err != nil {
		return err
	}
	a.stepping = true
	for _, eff := range effects {
		a.apply(eff)
	}
	for len(a.queue) > 0 {
		next := a.queue[0]
		a.queue = a.queue[1:]
		for _, eff := range a.sched.Step(a.clock.Now(), next) {
			a.apply(eff)
		}
	}
	a.stepping = false
	return nil
}

// flattenErrors lists the leaves of a joined error without the common wrapping prefix.
func flattenErrors(err error) []string {
	var leaves []error
	var walk func(error)
	walk = func(e error) {
		if j, ok := e.(interface{ Unwrap() []error }); ok {
			for _, c := range j.Unwrap() {
				walk(c)
			}
			return
		}
		if u := errors.Unwrap(e); u != nil {
			if _, joined := u.(interface{ Unwrap() []error }); joined {
				walk(u)
				return
			}
		}
		leaves = append(leaves, e)
	}
	walk(err)
	out := make([]string, 0, len(leaves))
	for _, l := range leaves {
		out = append(out, l.Error())
	}
	return out
}

// pendingRescaleBody is the "pending-rescale" of GET /jobs/:jobid; nil when nothing waits.
func pendingRescaleBody(p core.PendingRescale) *api.PendingRescale {
	if p.Reason == core.PendingNone {
		return nil
	}
	out := &api.PendingRescale{Reason: string(p.Reason), Message: p.Message,
		MissingSlots: p.MissingSlots, InFlight: p.InFlight}
	if !p.Until.IsZero() {
		out.Until = p.Until.UnixMilli()
	}
	if len(p.Target) > 0 {
		out.Target = make(map[string]int, len(p.Target))
		for v, n := range p.Target {
			out.Target[string(v)] = n
		}
	}
	return out
}
