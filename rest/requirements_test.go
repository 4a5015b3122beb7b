package rest

import (
	"encoding/json"
	"reflect"
	"strings"
	"testing"

	"github.com/tidestream/tide/api"
)

func TestParseRequirementsBody(t *testing.T) {
	tests := []struct {
		name     string
		body     string
		want     api.ResourceRequirements
		problems []string // substrings, one per expected problem
	}{
		{"valid", `{"a":{"parallelism":{"lowerBound":1,"upperBound":4}},"b":{"parallelism":{"lowerBound":-1,"upperBound":-1}}}`,
			api.ResourceRequirements{"a": {Parallelism: api.Bounds{LowerBound: 1, UpperBound: 4}}, "b": {Parallelism: api.Bounds{LowerBound: -1, UpperBound: -1}}}, nil},
		{"empty object", `{}`, api.ResourceRequirements{}, nil},
		{"empty body", ``, nil, []string{"empty"}},
		{"array", `[1]`, nil, []string{"not a JSON object"}},
		{"null", `null`, nil, []string{"not a JSON object"}},
		{"vertex not object", `{"a":3}`, api.ResourceRequirements{}, []string{`vertex "a"`}},
		{"missing parallelism", `{"a":{}}`, api.ResourceRequirements{}, []string{`"parallelism" is required`}},
		{"unknown fields", `{"a":{"parallelism":{"lowerBound":1,"upperBound":1,"x":1},"y":2}}`, api.ResourceRequirements{"a": {Parallelism: api.Bounds{LowerBound: 1, UpperBound: 1}}},
			[]string{`"parallelism.x"`, `"y"`}},
		{"missing bounds", `{"a":{"parallelism":{}}}`, api.ResourceRequirements{}, []string{"lowerBound", "upperBound"}},
		{"fraction and text", `{"a":{"parallelism":{"lowerBound":1.5,"upperBound":"two"}}}`, api.ResourceRequirements{}, []string{"lowerBound", "upperBound"}},
		{"below -1", `{"a":{"parallelism":{"lowerBound":-2,"upperBound":1}}}`, api.ResourceRequirements{}, []string{"lowerBound"}},
		{"too large", `{"a":{"parallelism":{"lowerBound":1,"upperBound":99999999999}}}`, api.ResourceRequirements{}, []string{"upperBound"}},
		{"empty id", `{"":{"parallelism":{"lowerBound":1,"upperBound":1}}}`, api.ResourceRequirements{}, []string{"empty"}},
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

// FuzzParseRequirementsBody: the parser never panics, and what it accepts without
// problems re-encodes to a body it parses to the same requirements.
func FuzzParseRequirementsBody(f *testing.F) {
	for _, s := range []string{
		`{"a":{"parallelism":{"lowerBound":1,"upperBound":4}}}`,
		`{"a":{"parallelism":{"lowerBound":-1,"upperBound":-1}},"b":{"parallelism":{"lowerBound":2,"upperBound":2}}}`,
		`{"a":{"parallelism":{"lowerBound":"1"}}}`, `[]`, `null`, `{"a":null}`, `{"a":{"parallelism":[]}}`, ``,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, body []byte) {
		req, problems := parseRequirementsBody(body)
		for _, p := range problems {
			if p == "" {
				t.Fatal("empty problem")
			}
		}
		if len(problems) > 0 {
			return
		}
		again, err := json.Marshal(req)
		if err != nil {
			t.Fatal(err)
		}
		req2, problems2 := parseRequirementsBody(again)
		if len(problems2) > 0 || len(req2) != len(req) {
			t.Fatalf("re-encoded %s: %q, %v (from %v)", again, problems2, req2, req)
		}
		for v, b := range req {
			if req2[v] != b {
				t.Fatalf("vertex %s: %v then %v", v, b, req2[v])
			}
		}
	})
}
