package am

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"slices"
	"strings"
	"time"

	"github.com/tidestream/tide/web"
)

// maxRequestBody bounds every request body; larger ones are answered 413.
const maxRequestBody = 1 << 20

// route is one endpoint of the REST API.
type route struct {
	method, pattern string
	handler         http.HandlerFunc
}

// routes lists tide's REST API (Flink's paths and JSON field names). Each resource has its
// own rest_<resource>.go file.
func (a *AM) routes() []route {
	job := a.withJob
	return []route{
		{"GET", "/overview", a.getOverview},
		{"GET", "/config", a.getConfig},
		{"GET", "/jobmanager/config", a.getJobManagerConfig},
		{"GET", "/jobs", a.getJobs},
		{"GET", "/jobs/overview", a.getJobsOverview},
		{"GET", "/jobs/{jobid}", job(a.getJob)},
		{"PATCH", "/jobs/{jobid}", job(a.patchJob)},
		{"GET", "/jobs/{jobid}/status", job(a.getJobStatus)},
		{"GET", "/jobs/{jobid}/plan", job(a.getPlan)},
		{"GET", "/jobs/{jobid}/resource-requirements", job(a.getRequirements)},
		{"PUT", "/jobs/{jobid}/resource-requirements", job(a.putRequirements)},
		{"GET", "/jobs/{jobid}/rescales", job(a.getRescales)},
		{"GET", "/jobs/{jobid}/exceptions", job(a.getExceptions)},
		{"GET", "/jobs/{jobid}/vertices/{vertexid}", job(a.getVertex)},
		{"GET", "/jobs/{jobid}/vertices/{vertexid}/backpressure", job(a.getVertexBackPressure)},
		{"GET", "/jobs/{jobid}/checkpoints", job(a.getCheckpoints)},
		{"POST", "/jobs/{jobid}/checkpoints", job(a.postCheckpoint)},
		{"GET", "/jobs/{jobid}/checkpoints/config", job(a.getCheckpointConfig)},
		{"GET", "/jobs/{jobid}/checkpoints/details/{checkpointid}", job(a.getCheckpointDetails)},
		{"GET", "/jobs/{jobid}/checkpoints/{triggerid}", job(a.getCheckpointTrigger)},
		{"POST", "/jobs/{jobid}/savepoints", job(a.postSavepoint)},
		{"GET", "/jobs/{jobid}/savepoints/{triggerid}", job(a.getSavepointTrigger)},
		{"POST", "/jobs/{jobid}/stop", job(a.postStop)},
		{"GET", "/taskmanagers", a.getTaskManagers},
		{"GET", "/taskmanagers/{tmid}", a.getTaskManager},
		{"GET", "/blocklist", a.getBlocklist},
		// The seed spells the add path /blocklist/nodes/<id> and the remove path
		// /blocklist/node/<id>; tide accepts both spellings and the short /blocklist/<id>.
		{"PUT", "/blocklist/{nodeid}", a.putBlockedNode},
		{"POST", "/blocklist/{nodeid}", a.putBlockedNode},
		{"DELETE", "/blocklist/{nodeid}", a.deleteBlockedNode},
		{"PUT", "/blocklist/nodes/{nodeid}", a.putBlockedNode},
		{"POST", "/blocklist/nodes/{nodeid}", a.putBlockedNode},
		{"DELETE", "/blocklist/nodes/{nodeid}", a.deleteBlockedNode},
		{"DELETE", "/blocklist/node/{nodeid}", a.deleteBlockedNode},
		{"GET", "/metrics", a.getMetrics},
	}
}

// restHandler routes the REST API: a known path with a method it does not serve is
// answered 405 with an Allow header, an unknown path 404, both in Flink's error shape;
// mutating calls pass the bearer-token check first.
func (a *AM) restHandler() http.Handler {
	mux := http.NewServeMux()
	allowed := map[string][]string{}
	var patterns []string
	for _, r := range a.routes() {
		h := r.handler
		if isMutating(r.method) {
			h = a.api.auth.require(h)
		}
		mux.HandleFunc(r.method+" "+r.pattern, h)
		if _, ok := allowed[r.pattern]; !ok {
			patterns = append(patterns, r.pattern)
		}
		allowed[r.pattern] = append(allowed[r.pattern], r.method)
	}
	for _, p := range patterns {
		methods := allowed[p]
		if slices.Contains(methods, http.MethodGet) {
			methods = append(methods, http.MethodHead)
		}
		allow := strings.Join(methods, ", ")
		notAllowed := func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Allow", allow)
			writeError(w, http.StatusMethodNotAllowed, fmt.Sprintf("Method %s not allowed on %s: expected %s", r.Method, r.URL.Path, allow))
		}
		// One pattern per method: a method-less pattern would conflict with the method
		// patterns of a wider path (PATCH /jobs/{jobid} against /jobs/overview).
		for _, m := range knownMethods {
			if !slices.Contains(methods, m) {
				mux.HandleFunc(m+" "+p, notAllowed)
			}
		}
	}
	ui := web.Handler() // the job's web page at / (package web)
	for _, p := range web.Patterns {
		mux.Handle(p, ui)
	}
	mux.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {
		writeError(w, http.StatusNotFound, fmt.Sprintf("Not found: %s %s", r.Method, r.URL.Path))
	})
	return mux
}

// webURL is where the job's web page is served, "" without a REST API.
func (a *AM) webURL() string {
	if a.RESTAddr() == "" {
		return ""
	}
	return "http://" + a.RESTAddr() + "/"
}

// knownMethods are the methods answered 405 on a known path that does not serve them;
// others get 404.
var knownMethods = []string{http.MethodGet, http.MethodPut, http.MethodPost, http.MethodPatch,
	http.MethodDelete, http.MethodOptions}

func isMutating(method string) bool {
	switch method {
	case http.MethodPut, http.MethodPost, http.MethodPatch, http.MethodDelete:
		return true
	}
	return false
}

// withJob answers 404 for any job id other than this AM's job.
func (a *AM) withJob(h http.HandlerFunc) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		if id := r.PathValue("jobid"); id != a.cfg.JobID {
			writeError(w, http.StatusNotFound, fmt.Sprintf("Job %s not found (this AM runs job %s)", id, a.cfg.JobID))
			return
		}
		h(w, r)
	}
}

// readBody reads a request body of at most maxRequestBody bytes. On failure it has
// answered the request (413 for an oversize body) and returns false.
func readBody(w http.ResponseWriter, r *http.Request) ([]byte, bool) {
	body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, maxRequestBody))
	var tooLarge *http.MaxBytesError
	switch {
	case errors.As(err, &tooLarge):
		writeError(w, http.StatusRequestEntityTooLarge, fmt.Sprintf("Request body of %s %s is larger than %d bytes", r.Method, r.URL.Path, tooLarge.Limit))
		return nil, false
	case err != nil:
		writeError(w, http.StatusBadRequest, fmt.Sprintf("Reading the request body of %s %s: %v", r.Method, r.URL.Path, err))
		return nil, false
	}
	return body, true
}

// decodeBody reads a JSON object into v, rejecting unknown fields and trailing data; an
// empty body leaves v as it is. On failure it has answered 400 (or 413) and returns false.
func decodeBody(w http.ResponseWriter, r *http.Request, v any) bool {
	body, ok := readBody(w, r)
	if !ok {
		return false
	}
	if err := decodeStrict(body, v); err != nil {
		writeError(w, http.StatusBadRequest, fmt.Sprintf("Invalid request body of %s %s: %v", r.Method, r.URL.Path, err))
		return false
	}
	return true
}

func decodeStrict(body []byte, v any) error {
	if len(strings.TrimSpace(string(body))) == 0 {
		return nil
	}
	dec := json.NewDecoder(strings.NewReader(string(body)))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		return err
	}
	if dec.More() {
		return errors.New("unexpected data after the JSON object")
	}
	return nil
}

func writeJSON(w http.ResponseWriter, code int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(code)
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	_ = enc.Encode(v)
}

// writeError answers with Flink's error body {"errors": [...]}.
func writeError(w http.ResponseWriter, code int, msg string) {
	writeErrors(w, code, []string{msg})
}

// writeErrors answers with every problem in Flink's error body.
func writeErrors(w http.ResponseWriter, code int, msgs []string) {
	writeJSON(w, code, map[string][]string{"errors": msgs})
}

func millis(t time.Time) int64 {
	if t.IsZero() {
		return -1
	}
	return t.UnixMilli()
}
