package am

import (
	"encoding/json"
	"fmt"
	"math"
	"net/http"
	"slices"
	"sort"
	"strings"
	"testing"

	"github.com/tidestream/tide/api"

	"github.com/tidestream/tide/rest"
)

const jobPath = "/jobs/" + testJobID

// requirementsOf reads GET resource-requirements.
func requirementsOf(t *testing.T, r *restAM) map[string]api.VertexRequirements {
	t.Helper()
	code, _, body := r.call(t, "GET", jobPath+"/resource-requirements", "")
	if code != http.StatusOK {
		t.Fatalf("GET resource-requirements = %d %s", code, body)
	}
	var out map[string]api.VertexRequirements
	if err := json.Unmarshal(body, &out); err != nil {
		t.Fatal(err)
	}
	if len(out) == 0 {
		t.Fatal("GET resource-requirements lists no vertex")
	}
	return out
}

func sortedVertices(req map[string]api.VertexRequirements) []string {
	ids := make([]string, 0, len(req))
	for id := range req {
		ids = append(ids, id)
	}
	sort.Strings(ids)
	return ids
}

// requirementsBody builds a PUT body giving every vertex the same bounds.
func requirementsBody(ids []string, lower, upper int) string {
	m := map[string]api.VertexRequirements{}
	for _, id := range ids {
		m[id] = api.VertexRequirements{Parallelism: api.Bounds{LowerBound: lower, UpperBound: upper}}
	}
	b, _ := json.Marshal(m)
	return string(b)
}

func TestRESTReadEndpoints(t *testing.T) {
	r := startRESTAM(t, restAMOptions{})
	tests := []struct {
		path  string
		check func(t *testing.T, body []byte)
	}{
		{"/overview", func(t *testing.T, b []byte) {
			var o api.ClusterOverview
			mustJSON(t, b, &o)
			if o.JobsRunning != 1 || o.TaskManagers != 0 || o.Version == "" {
				t.Errorf("overview %+v: want one running job, no TaskManagers, a version", o)
			}
		}},
		{"/config", func(t *testing.T, b []byte) {
			var c struct {
				Features map[string]bool `json:"features"`
			}
			mustJSON(t, b, &c)
			if !c.Features["web-rescale"] {
				t.Errorf("config %s: web-rescale off for a non-reactive job", b)
			}
		}},
		{"/jobmanager/config", func(t *testing.T, b []byte) {
			var entries []api.ConfigEntry
			mustJSON(t, b, &entries)
			if !slices.Contains(entries, api.ConfigEntry{Key: "jobmanager.scheduler", Value: "Adaptive"}) {
				t.Errorf("jobmanager/config lacks jobmanager.scheduler: Adaptive: %s", b)
			}
			if !slices.IsSortedFunc(entries, func(a, b api.ConfigEntry) int { return strings.Compare(a.Key, b.Key) }) {
				t.Error("jobmanager/config is not sorted by key")
			}
		}},
		{"/jobs", func(t *testing.T, b []byte) {
			if !strings.Contains(string(b), testJobID) {
				t.Errorf("jobs %s lacks the job id", b)
			}
		}},
		{"/jobs/overview", func(t *testing.T, b []byte) {
			var o struct{ Jobs []api.JobOverview }
			mustJSON(t, b, &o)
			if len(o.Jobs) != 1 || o.Jobs[0].JID != testJobID {
				t.Errorf("jobs/overview %s", b)
			}
		}},
		{jobPath, func(t *testing.T, b []byte) {
			var d struct {
				JID      string          `json:"jid"`
				Vertices []api.JobVertex `json:"vertices"`
			}
			mustJSON(t, b, &d)
			if d.JID != testJobID || len(d.Vertices) == 0 {
				t.Fatalf("job %s", b)
			}
			for _, v := range d.Vertices {
				if v.ID == "" || v.Name == "" || v.MaxParallelism < 1 || v.Status == "" || len(v.Tasks) != len(taskStates) {
					t.Errorf("vertex %+v: want id, name, maxParallelism, status and tasks", v)
				}
			}
		}},
		{jobPath + "/status", func(t *testing.T, b []byte) {
			var s map[string]string
			mustJSON(t, b, &s)
			if s["status"] == "" {
				t.Errorf("status %s", b)
			}
		}},
		{jobPath + "/plan", func(t *testing.T, b []byte) {
			var p map[string]api.Plan
			mustJSON(t, b, &p)
			if len(p["plan"].Nodes) == 0 || p["plan"].JID != testJobID {
				t.Errorf("plan %s", b)
			}
			inputs := 0
			for _, n := range p["plan"].Nodes {
				inputs += len(n.Inputs)
				if n.Parallelism != 2 {
					t.Errorf("plan node %s at %d before deployment, want its upper bound 2", n.ID, n.Parallelism)
				}
			}
			if inputs == 0 {
				t.Errorf("plan %s has no edges", b)
			}
		}},
		{jobPath + "/exceptions", func(t *testing.T, b []byte) {
			var e struct {
				ExceptionHistory struct {
					Entries   []api.ExceptionEntry `json:"entries"`
					Truncated *bool                `json:"truncated"`
				} `json:"exceptionHistory"`
			}
			mustJSON(t, b, &e)
			if e.ExceptionHistory.Entries == nil || e.ExceptionHistory.Truncated == nil {
				t.Errorf("exceptions %s: want entries and truncated", b)
			}
		}},
		{jobPath + "/rescales", func(t *testing.T, b []byte) {
			var rs struct {
				Rescales []api.Rescale `json:"rescales"`
			}
			mustJSON(t, b, &rs)
			if rs.Rescales == nil {
				t.Errorf("rescales %s", b)
			}
		}},
		{jobPath + "/checkpoints", func(t *testing.T, b []byte) {
			if !strings.Contains(string(b), `"counts"`) || !strings.Contains(string(b), `"history"`) {
				t.Errorf("checkpoints %s", b)
			}
		}},
		{jobPath + "/checkpoints/config", func(t *testing.T, b []byte) {
			var c map[string]any
			mustJSON(t, b, &c)
			if c["checkpoints_enabled"] != false || c["interval"] != float64(-1) {
				t.Errorf("checkpoints/config %s: want checkpointing off", b)
			}
		}},
		{jobPath + "/resource-requirements", func(t *testing.T, b []byte) {
			var req map[string]api.VertexRequirements
			mustJSON(t, b, &req)
			for id, v := range req {
				if v.Parallelism.LowerBound != 1 || v.Parallelism.UpperBound != 2 {
					t.Errorf("vertex %s bounds %+v, want [1,2]", id, v.Parallelism)
				}
			}
		}},
		{"/taskmanagers", func(t *testing.T, b []byte) {
			var tms struct {
				TaskManagers   []api.TaskManager   `json:"taskmanagers"`
				PendingWorkers []api.PendingWorker `json:"pendingWorkers"`
			}
			mustJSON(t, b, &tms)
			if tms.TaskManagers == nil || len(tms.TaskManagers) != 0 {
				t.Errorf("taskmanagers %s", b)
			}
			// The standalone driver requests nothing: an empty list, not null.
			if tms.PendingWorkers == nil || len(tms.PendingWorkers) != 0 {
				t.Errorf("pendingWorkers in %s, want []", b)
			}
		}},
		{"/blocklist", func(t *testing.T, b []byte) {
			if strings.TrimSpace(string(b)) != "{}" {
				t.Errorf("blocklist %s, want {}", b)
			}
		}},
	}
	for _, tt := range tests {
		t.Run(strings.ReplaceAll(tt.path, "/", "_"), func(t *testing.T) {
			code, h, body := r.call(t, "GET", tt.path, "")
			if code != http.StatusOK {
				t.Fatalf("GET %s = %d %s", tt.path, code, body)
			}
			if ct := h.Get("Content-Type"); ct != "application/json" {
				t.Errorf("GET %s Content-Type %q", tt.path, ct)
			}
			tt.check(t, body)
		})
	}
}

func mustJSON(t *testing.T, b []byte, v any) {
	t.Helper()
	if err := json.Unmarshal(b, v); err != nil {
		t.Fatalf("%s: %v", b, err)
	}
}

func TestRESTErrors(t *testing.T) {
	r := startRESTAM(t, restAMOptions{})
	other := "/jobs/ffffffffffffffffffffffffffffffff"
	big := `{"action":"MARK_BLOCKED","cause":"` + strings.Repeat("x", rest.MaxRequestBody) + `"}`
	tests := []struct {
		name, method, path, body string
		want                     int
		allow                    string // expected Allow header (405)
		mention                  string // a word the error must contain
	}{
		{"unknown path", "GET", "/no/such/thing", "", 404, "", "/no/such/thing"},
		{"unknown job", "GET", other, "", 404, "", "ffffffffffffffffffffffffffffffff"},
		{"unknown job status", "GET", other + "/status", "", 404, "", "not found"},
		{"unknown job requirements", "PUT", other + "/resource-requirements", "{}", 404, "", "not found"},
		{"unknown job cancel", "PATCH", other + "?mode=cancel", "", 404, "", "not found"},
		{"unknown job checkpoint", "POST", other + "/checkpoints", "", 404, "", "not found"},
		{"unknown taskmanager", "GET", "/taskmanagers/tm-x", "", 404, "", "tm-x"},
		{"unknown checkpoint trigger", "GET", jobPath + "/checkpoints/abc", "", 404, "", "abc"},
		{"unknown checkpoint details", "GET", jobPath + "/checkpoints/details/7", "", 404, "", "7"},
		{"bad checkpoint details", "GET", jobPath + "/checkpoints/details/x", "", 400, "", "x"},
		{"unknown savepoint trigger", "GET", jobPath + "/savepoints/abc", "", 404, "", "abc"},
		{"DELETE overview", "DELETE", "/overview", "", 405, "GET, HEAD", "DELETE"},
		{"PATCH jobs overview", "PATCH", "/jobs/overview", "", 405, "GET, HEAD", "PATCH"},
		{"POST status", "POST", jobPath + "/status", "", 405, "GET, HEAD", "POST"},
		{"DELETE requirements", "DELETE", jobPath + "/resource-requirements", "", 405, "GET, PUT, HEAD", "DELETE"},
		{"GET stop", "GET", jobPath + "/stop", "", 405, "POST", "GET"},
		{"GET blocklist node", "GET", "/blocklist/node/n1", "", 405, "DELETE", "GET"},
		{"PUT metrics", "PUT", "/metrics", "", 405, "GET, HEAD", "PUT"},
		{"bad cancel mode", "PATCH", jobPath + "?mode=stop", "", 400, "", "cancel"},
		{"requirements not JSON", "PUT", jobPath + "/resource-requirements", "{", 400, "", "JSON"},
		{"requirements empty", "PUT", jobPath + "/resource-requirements", "", 400, "", "empty"},
		{"requirements oversize", "PUT", jobPath + "/resource-requirements", `{"a":"` + strings.Repeat("y", rest.MaxRequestBody) + `"}`, 413, "", "larger"},
		{"checkpoint unknown field", "POST", jobPath + "/checkpoints", `{"checkpointType":"FULL","extra":1}`, 400, "", "extra"},
		{"checkpoint bad type", "POST", jobPath + "/checkpoints", `{"checkpointType":"INCREMENTAL"}`, 400, "", "INCREMENTAL"},
		{"checkpoint not JSON", "POST", jobPath + "/checkpoints", `[1,2]`, 400, "", "Invalid"},
		{"checkpoint without storage", "POST", jobPath + "/checkpoints", "", 409, "", "state.checkpoints.dir"},
		{"savepoint no directory", "POST", jobPath + "/savepoints", `{}`, 400, "", "state.savepoints.dir"},
		{"savepoint relative directory", "POST", jobPath + "/savepoints", `{"target-directory":"sp"}`, 400, "", "absolute"},
		{"savepoint unknown field", "POST", jobPath + "/savepoints", `{"target-dir":"/tmp"}`, 400, "", "target-dir"},
		{"savepoint bad format", "POST", jobPath + "/savepoints", `{"target-directory":"/tmp/sp","formatType":"XML"}`, 400, "", "XML"},
		{"savepoint oversize", "POST", jobPath + "/savepoints", `{"target-directory":"/` + strings.Repeat("z", rest.MaxRequestBody) + `"}`, 413, "", "larger"},
		{"stop with drain", "POST", jobPath + "/stop", `{"targetDirectory":"/tmp/sp","drain":true}`, 400, "", "drain"},
		{"stop unknown field", "POST", jobPath + "/stop", `{"target-directory":"/tmp/sp"}`, 400, "", "target-directory"},
		{"exceptions bad max", "GET", jobPath + "/exceptions?maxExceptions=0", "", 400, "", "maxExceptions"},
		{"block no body", "PUT", "/blocklist/nodes/n1", "", 400, "", "cause"},
		{"block malformed", "PUT", "/blocklist/nodes/n1", "{nope", 400, "", "JSON"},
		{"block unknown field", "PUT", "/blocklist/nodes/n1", `{"action":"MARK_BLOCKED","cause":"c","colour":"red"}`, 400, "", "colour"},
		{"block oversize", "PUT", "/blocklist/nodes/n1", big, 413, "", "larger"},
		{"unblock unknown", "DELETE", "/blocklist/node/never-blocked", "", 404, "", "never-blocked"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			code, h, body := r.call(t, tt.method, tt.path, tt.body)
			if code != tt.want {
				t.Fatalf("%s %s = %d %s, want %d", tt.method, tt.path, code, body, tt.want)
			}
			if tt.allow != "" && h.Get("Allow") != tt.allow {
				t.Errorf("Allow = %q, want %q", h.Get("Allow"), tt.allow)
			}
			msgs := errorsOf(t, body)
			if !strings.Contains(strings.Join(msgs, " "), tt.mention) {
				t.Errorf("errors %q do not mention %q", msgs, tt.mention)
			}
		})
	}
}

func TestRESTPutRequirements(t *testing.T) {
	r := startRESTAM(t, restAMOptions{})
	req := requirementsOf(t, r)
	ids := sortedVertices(req)
	maxP := map[string]int{}
	var d struct{ Vertices []api.JobVertex }
	_, _, body := r.call(t, "GET", jobPath, "")
	mustJSON(t, body, &d)
	for _, v := range d.Vertices {
		maxP[v.ID] = v.MaxParallelism
	}

	t.Run("every problem listed", func(t *testing.T) {
		bad := map[string]any{}
		for _, id := range ids {
			bad[id] = map[string]any{"parallelism": map[string]any{"lowerBound": 3, "upperBound": 2}}
		}
		bad["no-such-vertex"] = map[string]any{"parallelism": map[string]any{"lowerBound": 1, "upperBound": 1}}
		b, _ := json.Marshal(bad)
		code, _, body := r.call(t, "PUT", jobPath+"/resource-requirements", string(b))
		if code != http.StatusBadRequest {
			t.Fatalf("PUT = %d %s, want 400", code, body)
		}
		msgs := errorsOf(t, body)
		if len(msgs) != len(ids)+1 {
			t.Fatalf("errors %q: want one per vertex and one for the unknown vertex", msgs)
		}
		for _, id := range append(slices.Clone(ids), "no-such-vertex") {
			if !strings.Contains(strings.Join(msgs, "\n"), id) {
				t.Errorf("errors %q do not name %s", msgs, id)
			}
		}
	})
	t.Run("shape problems listed", func(t *testing.T) {
		body := fmt.Sprintf(`{%q: {"parallelism": {"lowerBound": "x"}}, %q: {"parallelism": {"lowerBound": 1, "upperBound": 2, "extra": 1}, "other": 2}}`, ids[0], ids[len(ids)-1])
		code, _, out := r.call(t, "PUT", jobPath+"/resource-requirements", body)
		if code != http.StatusBadRequest {
			t.Fatalf("PUT = %d %s", code, out)
		}
		msgs := strings.Join(errorsOf(t, out), "\n")
		for _, want := range []string{"lowerBound", "upperBound", "extra", "other"} {
			if !strings.Contains(msgs, want) {
				t.Errorf("errors %q do not mention %s", msgs, want)
			}
		}
	})
	t.Run("missing vertex", func(t *testing.T) {
		code, _, out := r.call(t, "PUT", jobPath+"/resource-requirements", requirementsBody(ids[:1], 1, 1))
		if len(ids) > 1 && (code != http.StatusBadRequest || !strings.Contains(string(out), "missing job vertex")) {
			t.Fatalf("PUT with one vertex of %d = %d %s, want 400 naming the missing vertex", len(ids), code, out)
		}
	})
	t.Run("in flight", func(t *testing.T) {
		r.am.api.updating.Store(true)
		code, _, out := r.call(t, "PUT", jobPath+"/resource-requirements", requirementsBody(ids, 1, 1))
		r.am.api.updating.Store(false)
		if code != http.StatusConflict || !strings.Contains(string(out), "in progress") {
			t.Fatalf("PUT during another update = %d %s, want 409", code, out)
		}
	})
	t.Run("applied", func(t *testing.T) {
		code, _, out := r.call(t, "PUT", jobPath+"/resource-requirements", requirementsBody(ids, 1, -1))
		if code != http.StatusOK {
			t.Fatalf("PUT = %d %s", code, out)
		}
		for id, v := range requirementsOf(t, r) {
			if v.Parallelism.LowerBound != 1 || v.Parallelism.UpperBound != maxP[id] {
				t.Errorf("vertex %s now %+v, want [1,%d] (-1 is maxParallelism)", id, v.Parallelism, maxP[id])
			}
		}
	})
}

func TestRESTPutRequirementsReactive(t *testing.T) {
	r := startRESTAM(t, restAMOptions{reactive: true})
	ids := sortedVertices(requirementsOf(t, r))
	code, _, out := r.call(t, "PUT", jobPath+"/resource-requirements", requirementsBody(ids, 1, 1))
	if code != http.StatusConflict || !strings.Contains(string(out), "reactive") {
		t.Fatalf("PUT in reactive mode = %d %s, want 409 explaining reactive mode", code, out)
	}
}

func TestRESTBlocklist(t *testing.T) {
	r := startRESTAM(t, restAMOptions{})
	steps := []struct {
		method, path, body string
		want               int
		check              func(t *testing.T, body []byte)
	}{
		{"PUT", "/blocklist/nodes/n1", `{"action":"MARK_BLOCKED","cause":"hot machine"}`, 201, func(t *testing.T, b []byte) {
			var n struct {
				Start int64 `json:"startTimestamp,string"`
				End   int64 `json:"endTimestamp,string"`
			}
			mustJSON(t, b, &n)
			// No endTimestamp: permanent (FLIP-224), since blocklist.default-timeout is 0 by default.
			if n.End != math.MaxInt64 {
				t.Errorf("blocking %s: want a permanent block (endTimestamp Long.MAX_VALUE)", b)
			}
		}},
		{"PUT", "/blocklist/nodes/n1", `{"action":"MARK_BLOCKED","cause":"again"}`, 409, func(t *testing.T, b []byte) {
			if !strings.Contains(strings.Join(errorsOf(t, b), " "), "allowMerge") {
				t.Errorf("409 %s does not say how to merge", b)
			}
		}},
		{"PUT", "/blocklist/nodes/n1", `{"action":"MARK_BLOCKED_AND_EVACUATE_TASKS","cause":"disk full","allowMerge":"true"}`, 202, func(t *testing.T, b []byte) {
			var n struct{ Action, Cause string }
			mustJSON(t, b, &n)
			if n.Action != "MARK_BLOCKED_AND_EVACUATE_TASKS" || n.Cause != "hot machine,disk full" {
				t.Errorf("merged node %s", b)
			}
		}},
		{"POST", "/blocklist/n2", `{"action":"MARK_BLOCKED","cause":"flaky","endTimestamp":"99999999999999"}`, 201, nil},
		{"PUT", "/blocklist/nodes/n3", `{"action":"MARK_IT","cause":"","endTimestamp":"soon"}`, 400, func(t *testing.T, b []byte) {
			if msgs := errorsOf(t, b); len(msgs) != 3 {
				t.Errorf("errors %q: want one each for action, cause and endTimestamp", msgs)
			}
		}},
		{"GET", "/blocklist", "", 200, func(t *testing.T, b []byte) {
			var m map[string]json.RawMessage
			mustJSON(t, b, &m)
			if len(m) != 2 || m["n1"] == nil || m["n2"] == nil {
				t.Errorf("blocklist %s, want n1 and n2", b)
			}
		}},
		{"GET", "/overview", "", 200, nil},
		{"DELETE", "/blocklist/node/n1", "", 200, nil},
		{"DELETE", "/blocklist/nodes/n1", "", 404, nil},
		{"DELETE", "/blocklist/n2", "", 200, nil},
		{"GET", "/blocklist", "", 200, func(t *testing.T, b []byte) {
			if strings.TrimSpace(string(b)) != "{}" {
				t.Errorf("blocklist after unblocking %s, want {}", b)
			}
		}},
	}
	for i, s := range steps {
		code, _, body := r.call(t, s.method, s.path, s.body)
		if code != s.want {
			t.Fatalf("step %d: %s %s = %d %s, want %d", i, s.method, s.path, code, body, s.want)
		}
		if s.check != nil {
			s.check(t, body)
		}
	}
}

func TestRESTCancelThenTerminated(t *testing.T) {
	r := startRESTAM(t, restAMOptions{})
	ids := sortedVertices(requirementsOf(t, r))
	if code, _, body := r.call(t, "PATCH", jobPath+"?mode=cancel", ""); code != http.StatusAccepted {
		t.Fatalf("cancel = %d %s", code, body)
	}
	if res := r.stop(); res.Status != "CANCELED" {
		t.Fatalf("job ended %s, want CANCELED", res.Status)
	}
	// The loop has ended; the server is closed too, so call the handlers directly.
	h := r.am.restHandler()
	for _, c := range []struct{ method, path, body string }{
		{"PUT", jobPath + "/resource-requirements", requirementsBody(ids, 1, 1)},
		{"PUT", "/blocklist/nodes/n1", `{"action":"MARK_BLOCKED","cause":"c"}`},
		{"PATCH", jobPath + "?mode=cancel", ""},
	} {
		rec := serve(h, c.method, c.path, c.body)
		if rec.Code != http.StatusConflict {
			t.Errorf("%s %s after the end = %d %s, want 409", c.method, c.path, rec.Code, rec.Body)
		}
	}
	if rec := serve(h, "GET", jobPath+"/resource-requirements", ""); rec.Code != http.StatusOK {
		t.Errorf("GET resource-requirements after the end = %d %s", rec.Code, rec.Body)
	}
}

func TestRESTBlocklistDisabled(t *testing.T) {
	r := startRESTAM(t, restAMOptions{dynamic: []string{"blocklist.enabled=false"}})
	code, _, body := r.call(t, "PUT", "/blocklist/nodes/n1", `{"action":"MARK_BLOCKED","cause":"c"}`)
	if code != http.StatusConflict || !strings.Contains(strings.Join(errorsOf(t, body), " "), "blocklist.enabled") {
		t.Fatalf("PUT with the blocklist disabled = %d %s, want 409 naming blocklist.enabled", code, body)
	}
}
