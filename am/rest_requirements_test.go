package am

import (
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"reflect"
	"strings"
	"testing"

	"github.com/tidestream/tide/api"
	"github.com/tidestream/tide/core"
)

func TestParseRequirementsBody(t *testing.T) {
	tests := []struct {
		name     string
		body     string
		want     map[core.VertexID]core.Bounds
		problems []string // substrings, one per expected problem
	}{
		{"valid", `{"a":{"parallelism":{"lowerBound":1,"upperBound":4}},"b":{"parallelism":{"lowerBound":-1,"upperBound":-1}}}`,
			map[core.VertexID]core.Bounds{"a": {Lower: 1, Upper: 4}, "b": {Lower: -1, Upper: -1}}, nil},
		{"empty object", `{}`, map[core.VertexID]core.Bounds{}, nil},
		{"empty body", ``, nil, []string{"empty"}},
		{"array", `[1]`, nil, []string{"not a JSON object"}},
		{"null", `null`, nil, []string{"not a JSON object"}},
		{"vertex not object", `{"a":3}`, map[core.VertexID]core.Bounds{}, []string{`vertex "a"`}},
		{"missing parallelism", `{"a":{}}`, map[core.VertexID]core.Bounds{}, []string{`"parallelism" is required`}},
		{"unknown fields", `{"a":{"parallelism":{"lowerBound":1,"upperBound":1,"x":1},"y":2}}`, map[core.VertexID]core.Bounds{"a": {Lower: 1, Upper: 1}},
			[]string{`"parallelism.x"`, `"y"`}},
		{"missing bounds", `{"a":{"parallelism":{}}}`, map[core.VertexID]core.Bounds{}, []string{"lowerBound", "upperBound"}},
		{"fraction and text", `{"a":{"parallelism":{"lowerBound":1.5,"upperBound":"two"}}}`, map[core.VertexID]core.Bounds{}, []string{"lowerBound", "upperBound"}},
		{"below -1", `{"a":{"parallelism":{"lowerBound":-2,"upperBound":1}}}`, map[core.VertexID]core.Bounds{}, []string{"lowerBound"}},
		{"too large", `{"a":{"parallelism":{"lowerBound":1,"upperBound":99999999999}}}`, map[core.VertexID]core.Bounds{}, []string{"upperBound"}},
		{"empty id", `{"":{"parallelism":{"lowerBound":1,"upperBound":1}}}`, map[core.VertexID]core.Bounds{}, []string{"empty"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, problems := parseRequirementsBody([]byte(tt.body))
			if len(problems) != len(tt.problems) {
				t.Fatalf("problems %q, want %d mentioning %q", problems, len(tt.problems), tt.problems)
			}
			all := strings.Join(problems, "\n")
			for _, p := range tt.problems {
				if !strings.Contains(all, p) {
					t.Errorf("problems %q do not mention %s", problems, p)
				}
			}
			if tt.want != nil && !reflect.DeepEqual(got, tt.want) {
				t.Errorf("requirements %v, want %v", got, tt.want)
			}
		})
	}
}

func TestFlattenErrors(t *testing.T) {
	a, b, c := errors.New("a"), errors.New("b"), errors.New("c")
	err := fmt.Errorf("update resource requirements: %w", errors.Join(a, errors.Join(b, c)))
	if got := flattenErrors(err); !reflect.DeepEqual(got, []string{"a", "b", "c"}) {
		t.Fatalf("flattenErrors = %q", got)
	}
	if got := flattenErrors(fmt.Errorf("x: %w", a)); !reflect.DeepEqual(got, []string{"x: a"}) {
		t.Fatalf("flattenErrors of a plain wrap = %q", got)
	}
}

// TestJobShowsPendingRescale: GET /jobs/:jobid says why the job waits; with no
// TaskManager at all the lower bounds miss slots, and it counts them.
func TestJobShowsPendingRescale(t *testing.T) {
	for _, reactive := range []bool{false, true} {
		t.Run(fmt.Sprintf("reactive=%v", reactive), func(t *testing.T) {
			r := startRESTAM(t, restAMOptions{reactive: reactive})
			var d api.JobDetails
			waitUntil(t, "a pending rescale in GET /jobs/:jobid", func() bool {
				code, _, body := r.call(t, "GET", "/jobs/"+testJobID, "")
				if code != http.StatusOK {
					t.Fatalf("GET /jobs/%s = %d: %s", testJobID, code, body)
				}
				if err := json.Unmarshal(body, &d); err != nil {
					t.Fatalf("GET /jobs/%s: %v in %s", testJobID, err, body)
				}
				return d.PendingRescale != nil
			})
			p := d.PendingRescale
			if p.Reason != string(core.PendingSlots) || p.MissingSlots < 1 || !strings.Contains(p.Message, "more slot") {
				t.Fatalf("pending-rescale = %+v, want %s with the missing slots counted", p, core.PendingSlots)
			}
		})
	}
}
