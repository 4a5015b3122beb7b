package am

import (
	"encoding/json"
	"net/http"
	"strings"
	"testing"

	"github.com/tidestream/tide/api"
)

// FuzzRESTRequirementsHandler drives PUT resource-requirements of a running AM: every
// answer is 200, 400 or 409 with Flink's error body, never a panic or a 5xx.
func FuzzRESTRequirementsHandler(f *testing.F) {
	r := startRESTAM(f, restAMOptions{})
	h := r.am.restHandler()
	ids := []string{}
	for id := range requirementsOfHandler(f, h) {
		ids = append(ids, id)
	}
	f.Add([]byte(requirementsBody(ids, 1, 2)))
	f.Add([]byte(requirementsBody(ids, -1, -1)))
	f.Add([]byte(requirementsBody(ids, 3, 1)))
	f.Add([]byte(`{"x":{"parallelism":{"lowerBound":1,"upperBound":1}}}`))
	f.Fuzz(func(t *testing.T, body []byte) {
		rec := serve(h, "PUT", jobPath+"/resource-requirements", string(body))
		switch rec.Code {
		case http.StatusOK:
		case http.StatusBadRequest, http.StatusConflict, http.StatusRequestEntityTooLarge:
			errorsOf(t, rec.Body.Bytes())
		default:
			t.Fatalf("PUT %q = %d %s", body, rec.Code, rec.Body)
		}
	})
}

func requirementsOfHandler(t testing.TB, h http.Handler) map[string]api.VertexRequirements {
	rec := serve(h, "GET", jobPath+"/resource-requirements", "")
	var out map[string]api.VertexRequirements
	if err := json.Unmarshal(rec.Body.Bytes(), &out); err != nil || len(out) == 0 {
		t.Fatalf("GET resource-requirements = %d %s: %v", rec.Code, rec.Body, err)
	}
	return out
}

// FuzzRESTBlocklistHandler drives PUT /blocklist/nodes/:id of a running AM with any body:
// 201 and 202 return the node, 400 and 409 Flink's error body; nothing else.
func FuzzRESTBlocklistHandler(f *testing.F) {
	r := startRESTAM(f, restAMOptions{})
	h := r.am.restHandler()
	for _, s := range []string{
		`{"action":"MARK_BLOCKED","cause":"hot"}`,
		`{"action":"MARK_BLOCKED_AND_EVACUATE_TASKS","cause":"disk","endTimestamp":"99999999999999","allowMerge":"true"}`,
		`{"action":"MARK_BLOCKED","cause":"x","allowMerge":true,"endTimestamp":1}`,
		`{"action":5}`, `[]`, ``, `{"action":"MARK_BLOCKED","cause":"c","extra":null}`,
	} {
		f.Add("n1", []byte(s))
	}
	f.Fuzz(func(t *testing.T, node string, body []byte) {
		if node == "" || node == "." || node == ".." || strings.ContainsAny(node, "/?#%") || strings.TrimSpace(node) != node || !isPathSafe(node) {
			return // not a path segment the router would hand over
		}
		rec := serve(h, "PUT", "/blocklist/nodes/"+node, string(body))
		switch rec.Code {
		case http.StatusCreated, http.StatusAccepted:
			var n struct {
				Action string `json:"action"`
				Cause  string `json:"cause"`
			}
			if err := json.Unmarshal(rec.Body.Bytes(), &n); err != nil || n.Action == "" || n.Cause == "" {
				t.Fatalf("PUT %q = %d %s: want the node", body, rec.Code, rec.Body)
			}
		case http.StatusBadRequest, http.StatusConflict, http.StatusRequestEntityTooLarge:
			errorsOf(t, rec.Body.Bytes())
		default:
			t.Fatalf("PUT %s %q = %d %s", node, body, rec.Code, rec.Body)
		}
	})
}

// isPathSafe: printable ASCII without spaces, so the id survives the request line as is.
func isPathSafe(s string) bool {
	for _, c := range s {
		if c <= ' ' || c >= 0x7f {
			return false
		}
	}
	return true
}
