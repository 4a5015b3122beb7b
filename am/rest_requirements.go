package am

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"slices"
	"strings"

	"github.com/tidestream/tide/api"
	"github.com/tidestream/tide/core"
)

// requirementBounds is one vertex of Flink's JobResourceRequirementsBody.
type requirementBounds struct {
	LowerBound int `json:"lowerBound"`
	UpperBound int `json:"upperBound"`
}

type vertexRequirement struct {
	Parallelism requirementBounds `json:"parallelism"`
}

// getRequirements serves GET /jobs/:jobid/resource-requirements.
func (a *AM) getRequirements(w http.ResponseWriter, r *http.Request) {
	var req map[core.VertexID]core.Bounds
	if err := a.inspect(r.Context(), func() { req = a.sched.Requirements() }); err != nil {
		writeError(w, http.StatusServiceUnavailable, err.Error())
		return
	}
	out := make(map[string]vertexRequirement, len(req))
	for v, b := range req {
		out[string(v)] = vertexRequirement{Parallelism: requirementBounds{LowerBound: b.Lower, UpperBound: b.Upper}}
	}
	writeJSON(w, http.StatusOK, out)
}

// putRequirements serves PUT /jobs/:jobid/resource-requirements (FLIP-291): the new bounds
// of every vertex, applied through the scheduler's rescale logic. 400 lists every problem,
// 409 answers a second update while one is being applied, or a job in reactive mode.
func (a *AM) putRequirements(w http.ResponseWriter, r *http.Request) {
	body, ok := readBody(w, r)
	if !ok {
		return
	}
	req, problems := parseRequirementsBody(body)
	if len(problems) > 0 {
		writeErrors(w, http.StatusBadRequest, problems)
		return
	}
	if !a.api.updating.CompareAndSwap(false, true) {
		writeError(w, http.StatusConflict, fmt.Sprintf("Another update of the resource requirements of job %s is in progress: retry when it is done", a.cfg.JobID))
		return
	}
	defer a.api.updating.Store(false)
	var uerr error
	err := a.mutate(r.Context(), func() { uerr = a.updateRequirements(req) })
	if writeMutateError(w, err, fmt.Sprintf("Job %s has terminated: its resource requirements can no longer change", a.cfg.JobID)) {
		return
	}
	switch {
	case errors.Is(uerr, core.ErrReactiveRequirements):
		writeError(w, http.StatusConflict, fmt.Sprintf("Job %s runs in reactive mode (execution-mode: reactive): its parallelism follows "+
			"the TaskManagers it gets, up to each vertex's maxParallelism. Add or stop TaskManagers to rescale it, or restart "+
			"the job without execution-mode: reactive to set resource requirements", a.cfg.JobID))
		return
	case uerr != nil:
		writeErrors(w, http.StatusBadRequest, flattenErrors(uerr))
		return
	}
	a.log.Info("resource requirements updated over REST", "requirements", req, "remote", r.RemoteAddr)
	writeJSON(w, http.StatusOK, map[string]any{})
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

// parseRequirementsBody parses Flink's JobResourceRequirementsBody: an object mapping every
// vertex id to {"parallelism": {"lowerBound": n, "upperBound": m}}. It reports every shape
// problem at once; the bounds themselves are checked by the scheduler, which knows each
// vertex's maxParallelism.
func parseRequirementsBody(body []byte) (map[core.VertexID]core.Bounds, []string) {
	var problems []string
	add := func(format string, args ...any) { problems = append(problems, fmt.Sprintf(format, args...)) }
	trimmed := bytes.TrimSpace(body)
	if len(trimmed) == 0 {
		return nil, []string{`request body is empty: expected {"<vertex id>": {"parallelism": {"lowerBound": n, "upperBound": m}}, ...} with every vertex of the job`}
	}
	var top map[string]json.RawMessage
	if err := json.Unmarshal(trimmed, &top); err != nil || top == nil {
		return nil, []string{fmt.Sprintf(`request body is not a JSON object of vertex ids: %v`, errOrNull(err))}
	}
	req := make(map[core.VertexID]core.Bounds, len(top))
	ids := make([]string, 0, len(top))
	for id := range top {
		ids = append(ids, id)
	}
	slices.Sort(ids)
	for _, id := range ids {
		if strings.TrimSpace(id) == "" {
			add("vertex id is empty")
			continue
		}
		var v map[string]json.RawMessage
		if err := json.Unmarshal(top[id], &v); err != nil || v == nil {
			add(`vertex %q: expected {"parallelism": {"lowerBound": n, "upperBound": m}}, got %s`, id, clipJSON(top[id]))
			continue
		}
		for k := range v {
			if k != "parallelism" {
				add("vertex %q: unknown field %q: expected only \"parallelism\"", id, k)
			}
		}
		raw, ok := v["parallelism"]
		if !ok {
			add(`vertex %q: field "parallelism" is required`, id)
			continue
		}
		var p map[string]json.RawMessage
		if err := json.Unmarshal(raw, &p); err != nil || p == nil {
			add(`vertex %q: "parallelism": expected {"lowerBound": n, "upperBound": m}, got %s`, id, clipJSON(raw))
			continue
		}
		for k := range p {
			if k != "lowerBound" && k != "upperBound" {
				add("vertex %q: unknown field \"parallelism.%s\": expected lowerBound and upperBound", id, k)
			}
		}
		lower, lok := boundField(p, id, "lowerBound", add)
		upper, uok := boundField(p, id, "upperBound", add)
		if lok && uok {
			req[core.VertexID(id)] = core.Bounds{Lower: lower, Upper: upper}
		}
	}
	slices.Sort(problems)
	return req, problems
}

// boundField reads one bound: an integer, -1 meaning the default bound.
func boundField(p map[string]json.RawMessage, id, name string, add func(string, ...any)) (int, bool) {
	raw, ok := p[name]
	if !ok {
		add("vertex %q: field \"parallelism.%s\" is required: expected an integer ≥ 1, or -1 for the default", id, name)
		return 0, false
	}
	var n json.Number
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	if err := dec.Decode(&n); err != nil {
		add("vertex %q: \"parallelism.%s\" is %s: expected an integer ≥ 1, or -1 for the default", id, name, clipJSON(raw))
		return 0, false
	}
	v, err := n.Int64()
	if err != nil || v < -1 || v > 1<<31-1 {
		add("vertex %q: \"parallelism.%s\" is %s: expected an integer ≥ 1, or -1 for the default", id, name, clipJSON(raw))
		return 0, false
	}
	return int(v), true
}

func errOrNull(err error) string {
	if err == nil {
		return "got null"
	}
	return err.Error()
}

func clipJSON(raw json.RawMessage) string {
	s := string(bytes.TrimSpace(raw))
	if len(s) > 40 {
		s = s[:40] + "…"
	}
	return s
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
