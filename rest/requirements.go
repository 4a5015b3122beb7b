package rest

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"
	"slices"
	"strings"

	"github.com/tidestream/tide/api"
)

// getRequirements serves GET /jobs/:jobid/resource-requirements.
func (s *server) getRequirements(w http.ResponseWriter, r *http.Request) {
	req, err := s.b.ResourceRequirements(r.Context())
	answer(w, req, err)
}

// putRequirements serves PUT /jobs/:jobid/resource-requirements (FLIP-291): the new bounds
// of every vertex, applied through the scheduler's rescale logic. 400 lists every problem,
// 409 answers a second update while one is being applied, or a job in reactive mode.
func (s *server) putRequirements(w http.ResponseWriter, r *http.Request) {
	body, ok := readBody(w, r)
	if !ok {
		return
	}
	req, problems := parseRequirementsBody(body)
	if len(problems) > 0 {
		writeErrors(w, http.StatusBadRequest, problems)
		return
	}
	if err := s.b.SetResourceRequirements(r.Context(), req, r.RemoteAddr); err != nil {
		writeFailure(w, err)
		return
	}
	writeJSON(w, http.StatusOK, map[string]any{})
}

// parseRequirementsBody parses Flink's JobResourceRequirementsBody: an object mapping every
// vertex id to {"parallelism": {"lowerBound": n, "upperBound": m}}. It reports every shape
// problem at once; the bounds themselves are checked by the scheduler, which knows each
// vertex's maxParallelism.
func parseRequirementsBody(body []byte) (api.ResourceRequirements, []string) {
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
	req := make(api.ResourceRequirements, len(top))
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
			req[id] = api.VertexRequirements{Parallelism: api.Bounds{LowerBound: lower, UpperBound: upper}}
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
