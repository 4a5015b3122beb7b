package tidecli

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"reflect"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/tidestream/tide/api"
)

const testJobID = "a1b2c3d4e5f60718293a4b5c6d7e8f90"

// fakeAM answers the REST paths the client commands use, with Flink's shapes.
type fakeAM struct {
	token string

	mu         sync.Mutex
	reqs       api.ResourceRequirements
	puts       []api.ResourceRequirements
	cancels    int
	polls      int
	blocked    map[string]api.BlockedNode
	failNext   string // failure cause of the next trigger
	failStatus string // and its status: COMPLETED (Flink) or FAILED (tide)
	lastBody   map[string]any
	state      string // the job's state ("": RUNNING)
	stopping   bool   // a stop-with-savepoint was triggered: the job ends with its savepoint
}

func (f *fakeAM) jobState() string {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.state == "" {
		return "RUNNING"
	}
	return f.state
}

func newFakeAM(t *testing.T) (*fakeAM, *httptest.Server) {
	f := &fakeAM{
		reqs: api.ResourceRequirements{
			"source": {Parallelism: api.Bounds{LowerBound: 1, UpperBound: 4}},
			"window": {Parallelism: api.Bounds{LowerBound: 1, UpperBound: 4}},
		},
		blocked: map[string]api.BlockedNode{},
	}
	srv := httptest.NewServer(f.handler())
	t.Cleanup(srv.Close)
	return f, srv
}

func writeBody(w http.ResponseWriter, code int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(code)
	_ = json.NewEncoder(w).Encode(v)
}

func fail(w http.ResponseWriter, code int, msgs ...string) {
	writeBody(w, code, map[string][]string{"errors": msgs})
}

func (f *fakeAM) handler() http.Handler {
	mux := http.NewServeMux()
	job := "/jobs/" + testJobID
	mux.HandleFunc("GET /jobs/overview", func(w http.ResponseWriter, _ *http.Request) {
		writeBody(w, 200, map[string]any{"jobs": []map[string]any{{
			"jid": testJobID, "name": "TopSpeedWindowing", "state": f.jobState(),
			"start-time": 1700000000000, "end-time": -1, "duration": 61000, "last-modification": 1700000001000}}})
	})
	mux.HandleFunc("GET "+job, func(w http.ResponseWriter, _ *http.Request) {
		f.mu.Lock()
		defer f.mu.Unlock()
		p := f.reqs["window"].Parallelism.UpperBound
		writeBody(w, 200, map[string]any{"jid": testJobID, "name": "TopSpeedWindowing", "state": "RUNNING",
			"start-time": 1700000000000, "duration": 61000, "attempt": 3,
			"timestamps": map[string]int64{"RUNNING": 1700000001000},
			"vertices": []map[string]any{
				{"id": "source", "name": "source", "parallelism": 4, "maxParallelism": 128, "status": "RUNNING"},
				{"id": "window", "name": "window", "parallelism": p, "maxParallelism": 128, "status": "RUNNING"}}})
	})
	mux.HandleFunc("GET "+job+"/exceptions", func(w http.ResponseWriter, r *http.Request) {
		task, tm := "window#1", "tm-1"
		entries := []api.ExceptionEntry{
			{ExceptionName: "tide.TaskFailure", Stacktrace: "state backend: write\n  /data/x: no space left on device",
				Timestamp: 1700000000500, TaskName: &task, TaskManagerID: &tm, Attempt: 2},
			{ExceptionName: "tide.GlobalFailure", Stacktrace: "older", Timestamp: 1700000000100, Attempt: 1},
		}
		if r.URL.Query().Get("maxExceptions") != "1" {
			fail(w, 400, "want maxExceptions=1, got "+r.URL.RawQuery)
			return
		}
		writeBody(w, 200, api.JobExceptions{ExceptionHistory: api.ExceptionHistory{Entries: entries[:1], Truncated: true}})
	})
	mux.HandleFunc("GET "+job+"/vertices/source", func(w http.ResponseWriter, _ *http.Request) {
		writeBody(w, 200, api.VertexDetails{ID: "source", Name: "source", Parallelism: 4, Aggregated: api.VertexMetrics{
			ReadRecordsPerSecond: 1200.4, WriteRecordsPerSecond: 1199.6, MaxBusyTimeMsPerSecond: 350,
			MaxBackPressuredTimeMsPerSecond: 620, Subtasks: 4}})
	})
	mux.HandleFunc("PATCH "+job, func(w http.ResponseWriter, r *http.Request) {
		if !f.authorized(w, r) {
			return
		}
		if r.URL.Query().Get("mode") != "cancel" {
			fail(w, 400, "bad mode")
			return
		}
		f.mu.Lock()
		f.cancels++
		f.mu.Unlock()
		writeBody(w, 202, map[string]any{})
	})
	mux.HandleFunc("GET "+job+"/resource-requirements", func(w http.ResponseWriter, _ *http.Request) {
		f.mu.Lock()
		defer f.mu.Unlock()
		writeBody(w, 200, f.reqs)
	})
	mux.HandleFunc("PUT "+job+"/resource-requirements", func(w http.ResponseWriter, r *http.Request) {
		if !f.authorized(w, r) {
			return
		}
		var body api.ResourceRequirements
		dec := json.NewDecoder(r.Body)
		dec.DisallowUnknownFields()
		if err := dec.Decode(&body); err != nil {
			fail(w, 400, "malformed body: "+err.Error())
			return
		}
		f.mu.Lock()
		defer f.mu.Unlock()
		var problems []string
		for v := range f.reqs {
			if _, ok := body[v]; !ok {
				problems = append(problems, "The request is incomplete, missing job vertex "+v)
			}
		}
		for v, b := range body {
			if b.Parallelism.UpperBound > 128 {
				problems = append(problems, fmt.Sprintf("vertex %s: upperBound %d above maxParallelism 128", v, b.Parallelism.UpperBound))
			}
		}
		if len(problems) > 0 {
			fail(w, 400, problems...)
			return
		}
		f.puts = append(f.puts, body)
		f.reqs = body
		writeBody(w, 200, map[string]any{})
	})
	trigger := func(kind string) {
		mux.HandleFunc("POST "+job+"/"+kind, func(w http.ResponseWriter, r *http.Request) {
			if f.takeTrigger(w, r, false) {
				writeBody(w, 202, map[string]string{"request-id": kind + "-trigger-1"})
			}
		})
		mux.HandleFunc("GET "+job+"/"+kind+"/{trigger}", func(w http.ResponseWriter, r *http.Request) {
			if r.PathValue("trigger") != kind+"-trigger-1" {
				fail(w, 404, "unknown trigger id "+r.PathValue("trigger"))
				return
			}
			f.mu.Lock()
			defer f.mu.Unlock()
			f.polls++
			if f.polls < 3 {
				writeBody(w, 200, map[string]any{"status": map[string]string{"id": "IN_PROGRESS"}})
				return
			}
			op := map[string]any{"checkpointId": 7}
			if kind == "savepoints" {
				dir, _ := f.lastBody["target-directory"].(string)
				if f.stopping {
					dir, _ = f.lastBody["targetDirectory"].(string)
					f.state, f.stopping = "CANCELED", false
				}
				op = map[string]any{"location": dir + "/savepoint-7"}
			}
			status := "COMPLETED"
			if f.failNext != "" {
				op = map[string]any{"failure-cause": map[string]string{"class": "java.lang.Exception", "stack-trace": f.failNext + "\n\tat nowhere"}}
				status = f.failStatus
			}
			writeBody(w, 200, map[string]any{"status": map[string]string{"id": status}, "operation": op})
		})
	}
	trigger("checkpoints")
	trigger("savepoints")
	mux.HandleFunc("GET "+job+"/status", func(w http.ResponseWriter, _ *http.Request) {
		writeBody(w, 200, map[string]string{"id": testJobID, "status": f.jobState()})
	})
	mux.HandleFunc("POST "+job+"/stop", func(w http.ResponseWriter, r *http.Request) {
		if f.takeTrigger(w, r, true) {
			writeBody(w, 202, map[string]string{"request-id": "savepoints-trigger-1"})
		}
	})
	mux.HandleFunc("GET "+job+"/rescales", func(w http.ResponseWriter, _ *http.Request) {
		writeBody(w, 200, map[string]any{"rescales": []map[string]any{
			{"id": 1, "trigger": "INITIAL_SCHEDULE", "outcome": "COMPLETED", "start": 1700000000000, "duration": 1200, "attempt": 1,
				"vertices": []map[string]any{{"vertex": "window", "before": 0, "after": 2}}},
			{"id": 2, "trigger": "NEW_RESOURCE_AVAILABLE", "outcome": "COMPLETED", "start": 1700000060000, "duration": 800, "attempt": 2,
				"vertices": []map[string]any{{"vertex": "window", "before": 2, "after": 3}}, "keyGroupsMoved": 43,
				"bytesMoved": 1572864, "warmupDuration": 2500, "switchDowntime": 350,
				"warmup": map[string]any{"planned": 2, "ready": 2}}}})
	})
	mux.HandleFunc("GET /taskmanagers", func(w http.ResponseWriter, _ *http.Request) {
		writeBody(w, 200, map[string]any{"taskmanagers": []map[string]any{
			{"id": "tm-1", "node": "host-a", "slotsNumber": 2, "freeSlots": 0, "timeSinceLastHeartbeat": 1500, "blocked": false},
			{"id": "tm-22", "node": "host-bb", "slotsNumber": 4, "freeSlots": 1, "timeSinceLastHeartbeat": 300, "blocked": true}},
			"pendingWorkers": []map[string]any{
				{"id": "tide-tsw-taskmanager-1-3", "node": "", "state": "Requested", "reason": "Unschedulable",
					"message": "0/3 nodes are available: 3 node(s) didn't match Pod's node affinity/selector.", "requested": time.Now().Add(-90 * time.Second).UnixMilli()}}})
	})
	mux.HandleFunc("GET /blocklist", func(w http.ResponseWriter, _ *http.Request) {
		f.mu.Lock()
		defer f.mu.Unlock()
		writeBody(w, 200, f.blocked)
	})
	mux.HandleFunc("PUT /blocklist/nodes/{node}", func(w http.ResponseWriter, r *http.Request) {
		if !f.authorized(w, r) {
			return
		}
		var body map[string]string
		if err := json.NewDecoder(r.Body).Decode(&body); err != nil {
			fail(w, 400, err.Error())
			return
		}
		f.mu.Lock()
		defer f.mu.Unlock()
		id := r.PathValue("node")
		if _, ok := f.blocked[id]; ok && body["allowMerge"] != "true" {
			fail(w, 409, "node "+id+" is already blocked")
			return
		}
		end := int64(9223372036854775807)
		if e, ok := body["endTimestamp"]; ok {
			fmt.Sscan(e, &end)
		}
		f.blocked[id] = api.BlockedNode{Action: body["action"], StartTimestamp: 1700000000000, EndTimestamp: end, Cause: body["cause"]}
		writeBody(w, 201, f.blocked[id])
	})
	mux.HandleFunc("DELETE /blocklist/node/{node}", func(w http.ResponseWriter, r *http.Request) {
		if !f.authorized(w, r) {
			return
		}
		f.mu.Lock()
		defer f.mu.Unlock()
		if _, ok := f.blocked[r.PathValue("node")]; !ok {
			fail(w, 404, "node "+r.PathValue("node")+" is not blocked")
			return
		}
		delete(f.blocked, r.PathValue("node"))
		writeBody(w, 200, map[string]any{})
	})
	mux.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {
		fail(w, 404, "Not found: "+r.Method+" "+r.URL.Path)
	})
	return mux
}

// takeTrigger records the body of a checkpoint, savepoint or stop request (stopping: a
// stop, which ends the job with its savepoint); false when it answered with an error.
func (f *fakeAM) takeTrigger(w http.ResponseWriter, r *http.Request, stopping bool) bool {
	if !f.authorized(w, r) {
		return false
	}
	var body map[string]any
	if err := json.NewDecoder(r.Body).Decode(&body); err != nil {
		fail(w, 400, err.Error())
		return false
	}
	f.mu.Lock()
	f.lastBody, f.polls, f.stopping = body, 0, stopping
	f.mu.Unlock()
	return true
}

func (f *fakeAM) authorized(w http.ResponseWriter, r *http.Request) bool {
	if f.token == "" || r.Header.Get("Authorization") == "Bearer "+f.token {
		return true
	}
	fail(w, 401, "this call needs Authorization: Bearer <rest.auth.token>")
	return false
}

// runTide runs the CLI in-process and returns its output and exit code.
func runTide(t *testing.T, args ...string) (string, int) {
	t.Helper()
	t.Setenv(envJobManager, "")
	t.Setenv(envRESTToken, "")
	t.Setenv("FLINK_CONF_DIR", "")
	app := newApp()
	var out bytes.Buffer
	app.Writer, app.ErrWriter = &out, &out
	err := app.Run(interleaveArgs(app, normalizeArgs(append([]string{"tide"}, args...))))
	if err != nil {
		fmt.Fprintf(&out, "tide: %s\n", errorText(err))
	}
	return out.String(), exitCode(err)
}

func addr(srv *httptest.Server) string { return strings.TrimPrefix(srv.URL, "http://") }

func TestClientTables(t *testing.T) {
	_, srv := newFakeAM(t)
	m := addr(srv)
	tests := []struct {
		name string
		args []string
		want []string // lines (or line prefixes after space normalisation) that must appear
	}{
		{"list", []string{"list", "-m", m},
			[]string{"JOB ID NAME STATUS START TIME DURATION", testJobID + " TopSpeedWindowing RUNNING"}},
		{"status by name", []string{"status", "TopSpeedWindowing", "-m", m},
			[]string{"Job: " + testJobID + " (TopSpeedWindowing)", "Status: RUNNING since", "Attempt: 3",
				"(attempt 2, subtask window#1, on tm-1): state backend: write /data/x: no space left on device (earlier ones: GET /jobs/" + testJobID + "/exceptions)",
				"VERTEX PARALLELISM REQUIRED MAX PARALLELISM STATUS IN/S OUT/S BUSY BACKPRESSURE",
				"source 4 1..4 128 RUNNING 1200 1200 35% 62% high", "window 4 1..4 128 RUNNING - - - -"}},
		{"status by prefix", []string{"status", "-m", m, "a1b2"}, []string{"Job: " + testJobID}},
		{"rescales", []string{"rescales", "a1b2c3", "-m", m},
			[]string{"ID TRIGGER OUTCOME STARTED TOOK ATTEMPT MOVED BYTES WARMUP DOWNTIME PARALLELISM", "1 INITIAL_SCHEDULE COMPLETED",
				"800ms 2 43 1.5 MiB 2.5s (2/2 ready) 350ms window 2→3"}},
		{"taskmanagers", []string{"taskmanagers", "-m", m},
			[]string{"ID NODE SLOTS FREE LAST HEARTBEAT BLOCKED", "tm-1 host-a 2 0 1.5s ago no", "tm-22 host-bb 4 1 300ms ago yes",
				"Requested TaskManagers not registered yet:", "ID STATE NODE WAITING REASON MESSAGE",
				"tide-tsw-taskmanager-1-3 Requested - 1m3", "Unschedulable 0/3 nodes are available: 3 node(s) didn't match Pod's node affinity/selector."}},
		{"blocklist empty", []string{"blocklist", "list", "-m", m}, []string{"No nodes are blocked."}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			out, code := runTide(t, tt.args...)
			if code != exitOK {
				t.Fatalf("exit %d:\n%s", code, out)
			}
			var lines []string
			for _, l := range strings.Split(out, "\n") {
				lines = append(lines, strings.Join(strings.Fields(l), " "))
			}
			for _, w := range tt.want {
				found := false
				for _, l := range lines {
					if strings.HasPrefix(l, w) || strings.Contains(l, w) {
						found = true
					}
				}
				if !found {
					t.Errorf("output lacks %q:\n%s", w, out)
				}
			}
		})
	}
}

// TestClientTableAligned: the columns of a table start at the same offset on every line.
func TestClientTableAligned(t *testing.T) {
	_, srv := newFakeAM(t)
	out, code := runTide(t, "taskmanagers", "-m", addr(srv))
	if code != exitOK {
		t.Fatalf("exit %d: %s", code, out)
	}
	// The first table (registered TaskManagers) ends at the blank line before the pending ones.
	first, _, _ := strings.Cut(strings.TrimSpace(out), "\n\n")
	lines := strings.Split(first, "\n")
	col := strings.Index(lines[0], "SLOTS")
	for _, l := range lines[1:] {
		if len(l) <= col || l[col-1] != ' ' || l[col] == ' ' {
			t.Errorf("column SLOTS (offset %d) not aligned in %q", col, l)
		}
	}
}

func TestClientJSON(t *testing.T) {
	_, srv := newFakeAM(t)
	m := addr(srv)
	for _, args := range [][]string{
		{"list", "--json", "-m", m},
		{"status", "--json", "a1", "-m", m},
		{"rescales", "a1", "--json", "-m", m},
		{"taskmanagers", "--json", "-m", m},
		{"checkpoint", "a1", "--json", "-m", m},
		{"blocklist", "list", "--json", "-m", m},
		{"cancel", "a1", "--json", "-m", m},
	} {
		out, code := runTide(t, args...)
		if code != exitOK {
			t.Fatalf("%q: exit %d: %s", args, code, out)
		}
		var v any
		if err := json.Unmarshal([]byte(out), &v); err != nil {
			t.Errorf("%q: output is not one JSON document (%v):\n%s", args, err, out)
		}
	}
}

func TestClientRescaleSendsEveryVertex(t *testing.T) {
	f, srv := newFakeAM(t)
	out, code := runTide(t, "rescale", testJobID, "--vertex", "window", "--parallelism", "2..3", "-m", addr(srv), "--wait", "30s")
	if code != exitOK {
		t.Fatalf("exit %d: %s", code, out)
	}
	want := api.ResourceRequirements{"source": {Parallelism: api.Bounds{LowerBound: 1, UpperBound: 4}}, "window": {Parallelism: api.Bounds{LowerBound: 2, UpperBound: 3}}}
	if len(f.puts) != 1 || !reflect.DeepEqual(f.puts[0], want) {
		t.Fatalf("PUT bodies %+v, want one with %+v", f.puts, want)
	}
	if !strings.Contains(out, "Vertex window of job "+testJobID+": parallelism 2..3 (was 1..4)") || !strings.Contains(out, "window: parallelism 3") {
		t.Errorf("output:\n%s", out)
	}
}

func TestClientCheckpointAndSavepoint(t *testing.T) {
	f, srv := newFakeAM(t)
	out, code := runTide(t, "checkpoint", "a1b2", "-m", addr(srv))
	if code != exitOK || !strings.Contains(out, "Checkpoint 7 of job "+testJobID+" completed.") || !strings.Contains(out, "trigger id checkpoints-trigger-1") {
		t.Fatalf("checkpoint: exit %d:\n%s", code, out)
	}
	if f.lastBody["checkpointType"] != "CONFIGURED" {
		t.Errorf("checkpoint body %v", f.lastBody)
	}
	out, code = runTide(t, "savepoint", "a1b2", "--dir", "file:///tmp/sp", "-m", addr(srv))
	if code != exitOK || !strings.Contains(out, "completed: file:///tmp/sp/savepoint-7") {
		t.Fatalf("savepoint: exit %d:\n%s", code, out)
	}
	if f.lastBody["target-directory"] != "file:///tmp/sp" || f.lastBody["cancel-job"] != false || f.lastBody["formatType"] != "CANONICAL" {
		t.Errorf("savepoint body %v", f.lastBody)
	}
	out, code = runTide(t, "savepoint", "a1b2", "--formatType", "native", "-m", addr(srv))
	if code != exitOK || f.lastBody["formatType"] != "native" {
		t.Fatalf("savepoint --formatType native: exit %d, body %v:\n%s", code, f.lastBody, out)
	}
	f.failNext = "checkpoint declined by window (1/2)"
	for _, status := range []string{"COMPLETED", "FAILED"} {
		f.failStatus = status
		out, code = runTide(t, "checkpoint", "a1b2", "-m", addr(srv))
		if code != exitError || !strings.Contains(out, "failed: checkpoint declined by window (1/2)") {
			t.Fatalf("failed checkpoint (status %s): exit %d:\n%s", status, code, out)
		}
	}
}

func TestClientStop(t *testing.T) {
	f, srv := newFakeAM(t)
	out, code := runTide(t, "stop", "a1b2", "--savepointPath", "file:///tmp/sp", "-m", addr(srv))
	if code != exitOK || !strings.Contains(out, "Savepoint completed. Path: file:///tmp/sp/savepoint-7") || !strings.Contains(out, "Job "+testJobID+" is CANCELED.") {
		t.Fatalf("stop: exit %d:\n%s", code, out)
	}
	if f.lastBody["targetDirectory"] != "file:///tmp/sp" || f.lastBody["formatType"] != "CANONICAL" || f.lastBody["drain"] != nil {
		t.Errorf("stop body %v", f.lastBody)
	}
	// The job has ended: nothing to stop, and the error names its state.
	out, code = runTide(t, "stop", "a1b2", "-m", addr(srv))
	if code != exitError || !strings.Contains(out, "is CANCELED: it has ended") {
		t.Fatalf("stop of an ended job: exit %d:\n%s", code, out)
	}
	f.mu.Lock()
	f.state, f.lastBody = "", nil
	f.mu.Unlock()
	for _, tc := range []struct {
		name string
		args []string
		code int
		want string
	}{
		{"unknown format", []string{"--formatType", "bogus"}, exitUsage, "bogus"},
		{"no job", nil, exitUsage, "JOB"},
		{"unknown job", []string{"ffff"}, exitError, "ffff"},
	} {
		args := append([]string{"stop"}, tc.args...)
		if tc.name == "unknown format" {
			args = append(args, "a1b2")
		}
		out, code := runTide(t, append(args, "-m", addr(srv))...)
		if code != tc.code || !strings.Contains(out, tc.want) {
			t.Errorf("%s: exit %d (want %d), output lacks %q:\n%s", tc.name, code, tc.code, tc.want, out)
		}
	}
	if f.lastBody != nil {
		t.Errorf("a refused stop reached the AM: %v", f.lastBody)
	}
	out, code = runTide(t, "stop", "a1b2", "--drain", "--formatType", "NATIVE", "-m", addr(srv))
	if code != exitOK || f.lastBody["drain"] != true || f.lastBody["formatType"] != "NATIVE" {
		t.Fatalf("stop --drain --formatType NATIVE: exit %d, body %v:\n%s", code, f.lastBody, out)
	}
}

func TestClientBlocklist(t *testing.T) {
	f, srv := newFakeAM(t)
	m := addr(srv)
	out, code := runTide(t, "blocklist", "add", "host-a", "--evacuate", "--timeout", "30m", "--cause", "bad disk", "-m", m)
	if code != exitOK || !strings.Contains(out, "Node host-a blocked (MARK_BLOCKED_AND_EVACUATE_TASKS)") {
		t.Fatalf("add: exit %d:\n%s", code, out)
	}
	if n := f.blocked["host-a"]; n.Cause != "bad disk" || n.EndTimestamp == 9223372036854775807 {
		t.Errorf("blocked node %+v", n)
	}
	out, code = runTide(t, "blocklist", "add", "host-a", "-m", m)
	if code != exitError || !strings.Contains(out, "409") || !strings.Contains(out, "already blocked") {
		t.Errorf("second add: exit %d:\n%s", code, out)
	}
	out, code = runTide(t, "blocklist", "list", "-m", m)
	if code != exitOK || !strings.Contains(out, "host-a") || !strings.Contains(out, "bad disk") {
		t.Errorf("list: exit %d:\n%s", code, out)
	}
	if out, code = runTide(t, "blocklist", "remove", "host-a", "-m", m); code != exitOK {
		t.Errorf("remove: exit %d:\n%s", code, out)
	}
	if out, code = runTide(t, "blocklist", "remove", "host-a", "-m", m); code != exitError || !strings.Contains(out, "not blocked") {
		t.Errorf("second remove: exit %d:\n%s", code, out)
	}
	// Without --evacuate the request names no action, so the AM's blocklist.default-action
	// applies; --evacuate=false asks for MARK_BLOCKED explicitly.
	if out, code = runTide(t, "blocklist", "add", "host-b", "-m", m); code != exitOK || f.blocked["host-b"].Action != "" {
		t.Errorf("add without --evacuate sent action %q: exit %d:\n%s", f.blocked["host-b"].Action, code, out)
	}
	if out, code = runTide(t, "blocklist", "add", "host-c", "--evacuate=false", "-m", m); code != exitOK || f.blocked["host-c"].Action != "MARK_BLOCKED" {
		t.Errorf("add --evacuate=false sent action %q: exit %d:\n%s", f.blocked["host-c"].Action, code, out)
	}
}

func TestClientToken(t *testing.T) {
	f, srv := newFakeAM(t)
	f.token = "s3cret"
	out, code := runTide(t, "cancel", "a1", "-m", addr(srv))
	if code != exitError || !strings.Contains(out, "401") || !strings.Contains(out, "--token") {
		t.Fatalf("without token: exit %d:\n%s", code, out)
	}
	if out, code = runTide(t, "cancel", "a1", "-m", addr(srv), "--token", "s3cret"); code != exitOK || f.cancels != 1 {
		t.Fatalf("with token: exit %d, cancels %d:\n%s", code, f.cancels, out)
	}
}

func TestClientExitCodes(t *testing.T) {
	_, srv := newFakeAM(t)
	m := addr(srv)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	dead := ln.Addr().String()
	ln.Close()
	tests := []struct {
		name string
		args []string
		code int
		want string
	}{
		{"unreachable", []string{"list", "-m", dead}, exitUnreachable, "no AM at " + dead + ": is it running? pass -m host:port"},
		{"no job arg", []string{"status", "-m", m}, exitUsage, "needs JOB"},
		{"two job args", []string{"cancel", "a", "b", "-m", m}, exitUsage, "takes one JOB"},
		{"unknown flag", []string{"list", "--bogus", "-m", m}, exitUsage, "bogus"},
		{"bad address", []string{"list", "-m", "nohostport"}, exitUsage, "expected host:port"},
		{"rescale without vertex", []string{"rescale", "a1", "--parallelism", "2", "-m", m}, exitUsage, "needs --vertex"},
		{"rescale bad range", []string{"rescale", "a1", "--vertex", "window", "--parallelism", "4..2", "-m", m}, exitUsage, "lower bound above upper bound"},
		{"rescale unknown vertex", []string{"rescale", "a1", "--vertex", "nope", "--parallelism", "2", "-m", m}, exitUsage, "its vertices are source, window"},
		{"rescale refused", []string{"rescale", "a1", "--vertex", "window", "--parallelism", "2..500", "-m", m}, exitError, "upperBound 500 above maxParallelism 128"},
		{"unknown job", []string{"status", "ffff", "-m", m}, exitError, "no job with that id, id prefix or name"},
		{"checkpoint bad type", []string{"checkpoint", "a1", "--type", "HUGE", "-m", m}, exitUsage, "expected CONFIGURED"},
		{"savepoint bad format", []string{"savepoint", "a1", "--formatType", "FULL", "-m", m}, exitUsage, `--formatType "FULL": expected CANONICAL or NATIVE`},
		{"blocklist add no node", []string{"blocklist", "add", "-m", m}, exitUsage, "needs one NODE"},
		{"unknown command", []string{"frobnicate"}, exitUsage, "unknown command"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			out, code := runTide(t, tt.args...)
			if code != tt.code || !strings.Contains(out, tt.want) {
				t.Fatalf("exit %d (want %d), output:\n%s\nwant it to contain %q", code, tt.code, out, tt.want)
			}
		})
	}
}

func TestInterleaveArgs(t *testing.T) {
	app := newApp()
	tests := []struct{ in, want []string }{
		{[]string{"tide", "rescale", "J", "--vertex", "v", "-p", "2..4", "--json"},
			[]string{"tide", "rescale", "--vertex", "v", "-p", "2..4", "--json", "J"}},
		{[]string{"tide", "--log-level", "debug", "status", "J", "-m", "h:1"},
			[]string{"tide", "--log-level", "debug", "status", "-m", "h:1", "J"}},
		{[]string{"tide", "blocklist", "add", "n1", "--evacuate", "--timeout=5m"},
			[]string{"tide", "blocklist", "add", "--evacuate", "--timeout=5m", "n1"}},
		{[]string{"tide", "cancel", "J", "--", "-x"}, []string{"tide", "cancel", "J", "--", "-x"}},
		// Not a client command: untouched.
		{[]string{"tide", "jobmanager", "-j", "X", "arg", "-D", "a=b"}, []string{"tide", "jobmanager", "-j", "X", "arg", "-D", "a=b"}},
		{[]string{"tide"}, []string{"tide"}},
	}
	for _, tt := range tests {
		if got := interleaveArgs(app, tt.in); !reflect.DeepEqual(got, tt.want) {
			t.Errorf("interleaveArgs(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
}

func TestParseParallelism(t *testing.T) {
	tests := []struct {
		in   string
		want api.Bounds
		ok   bool
	}{
		{"2..8", api.Bounds{LowerBound: 2, UpperBound: 8}, true},
		{"4", api.Bounds{LowerBound: 4, UpperBound: 4}, true},
		{"-1..6", api.Bounds{LowerBound: -1, UpperBound: 6}, true},
		{"2..-1", api.Bounds{LowerBound: 2, UpperBound: -1}, true},
		{" 3 .. 5 ", api.Bounds{LowerBound: 3, UpperBound: 5}, true},
		{"8..2", api.Bounds{}, false},
		{"0..2", api.Bounds{}, false},
		{"a..2", api.Bounds{}, false},
		{"2..", api.Bounds{}, false},
		{"", api.Bounds{}, false},
		{"-2", api.Bounds{}, false},
	}
	for _, tt := range tests {
		got, err := parseParallelism(tt.in)
		if (err == nil) != tt.ok || (tt.ok && got != tt.want) {
			t.Errorf("parseParallelism(%q) = %+v, %v; want %+v ok=%v", tt.in, got, err, tt.want, tt.ok)
		}
		if err != nil && exitCode(err) != exitUsage {
			t.Errorf("parseParallelism(%q) error %v is not a usage error", tt.in, err)
		}
	}
}

func FuzzParseParallelism(f *testing.F) {
	for _, s := range []string{"2..8", "4", "-1..-1", "8..2", "..", "1..2..3"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		b, err := parseParallelism(s)
		if err != nil {
			return
		}
		for _, n := range []int{b.LowerBound, b.UpperBound} {
			if n < 1 && n != -1 {
				t.Fatalf("parseParallelism(%q) = %+v: bound below 1 and not -1", s, b)
			}
		}
		if b.LowerBound > 0 && b.UpperBound > 0 && b.LowerBound > b.UpperBound {
			t.Fatalf("parseParallelism(%q) = %+v: lower above upper", s, b)
		}
		// What it prints parses back to the same bounds.
		again, err := parseParallelism(strings.ReplaceAll(b.String(), "default", "-1"))
		if err != nil || again != b {
			t.Fatalf("parseParallelism(%q) = %+v prints %q, which parses to %+v, %v", s, b, b, again, err)
		}
	})
}

func TestMatchJob(t *testing.T) {
	jobs := []api.JobOverview{
		{JID: "aaaa1111", Name: "WordCount"},
		{JID: "aaaa2222", Name: "TopSpeedWindowing"},
		{JID: "bbbb3333", Name: "WordCount"},
	}
	tests := []struct {
		ref, want, errWant string
	}{
		{"aaaa1111", "aaaa1111", ""},
		{"AAAA2222", "aaaa2222", ""},
		{"TopSpeedWindowing", "aaaa2222", ""},
		{"bbbb", "bbbb3333", ""},
		{"aaaa", "", "matches 2 jobs"},
		{"WordCount", "", "matches 2 jobs"},
		{"cccc", "", "no job with that id"},
		{"", "", "JOB is empty"},
	}
	for _, tt := range tests {
		j, err := matchJob(jobs, tt.ref, "h:1")
		if tt.errWant != "" {
			if err == nil || !strings.Contains(err.Error(), tt.errWant) {
				t.Errorf("matchJob(%q) = %v, %v; want error %q", tt.ref, j, err, tt.errWant)
			}
			continue
		}
		if err != nil || j.JID != tt.want {
			t.Errorf("matchJob(%q) = %v, %v; want %s", tt.ref, j, err, tt.want)
		}
	}
	if _, err := matchJob(nil, "x", "h:1"); err == nil || !strings.Contains(err.Error(), "runs no job") {
		t.Errorf("matchJob on no jobs: %v", err)
	}
}

func FuzzInterleaveArgs(f *testing.F) {
	f.Add("rescale J --vertex v -p 2..4 --json")
	f.Add("--log-level debug blocklist add n --evacuate -- -x")
	f.Add("status -m")
	app := newApp()
	f.Fuzz(func(t *testing.T, line string) {
		in := append([]string{"tide"}, strings.Fields(line)...)
		out := interleaveArgs(app, in)
		// Only the order changes: the same arguments, each as often.
		count := map[string]int{}
		for _, a := range in {
			count[a]++
		}
		for _, a := range out {
			count[a]--
		}
		for a, n := range count {
			if n != 0 {
				t.Fatalf("interleaveArgs(%q) = %q: %q appears %+d times more in the input", in, out, a, n)
			}
		}
		// Everything after "--" keeps its order at the end.
		for i, a := range in {
			if a == "--" {
				tail := in[i:]
				if !reflect.DeepEqual(out[len(out)-len(tail):], tail) {
					t.Fatalf("interleaveArgs(%q) = %q: the part after -- moved", in, out)
				}
				break
			}
		}
	})
}

// A checkpoint or savepoint of a job that has ended fails before anything is triggered,
// with or without --wait, naming the state and what to do.
func TestClientTriggerOnAnEndedJob(t *testing.T) {
	for _, state := range []string{"FINISHED", "CANCELED", "FAILED", "CANCELLING"} {
		for _, args := range [][]string{{"savepoint", "a1b2"}, {"savepoint", "a1b2", "--wait", "1m"}, {"checkpoint", "a1b2"}} {
			t.Run(state+" "+strings.Join(args, " "), func(t *testing.T) {
				f, srv := newFakeAM(t)
				f.state = state
				out, code := runTide(t, append(args, "-m", addr(srv))...)
				if code != exitError || !strings.Contains(out, "is "+state) || !strings.Contains(out, "will not run again") || !strings.Contains(out, "--fromSavepoint") {
					t.Fatalf("exit %d:\n%s", code, out)
				}
				if f.lastBody != nil {
					t.Fatalf("something was triggered: %v", f.lastBody)
				}
			})
		}
	}
}
