package rest

import (
	"context"
	"fmt"
	"net/http"
	"slices"
	"strings"

	"github.com/tidestream/tide/api"
	"github.com/tidestream/tide/web"
)

// Backend is what the REST API asks of the AM. Every answer is a type of package api;
// a failure the caller should see with a status is an *api.StatusError, anything else
// is answered 500. remote names the caller for the AM's log.
type Backend interface {
	// JobID is the id of the one job the AM runs.
	JobID() string

	ClusterOverview(ctx context.Context) (api.ClusterOverview, error)
	DashboardConfig() api.DashboardConfig
	JobManagerConfig() []api.ConfigEntry

	JobOverview() api.JobOverview
	JobDetails(ctx context.Context) (api.JobDetails, error)
	JobPlan(ctx context.Context) (api.JobPlan, error)
	CancelJob(ctx context.Context, remote string) error

	ResourceRequirements(ctx context.Context) (api.ResourceRequirements, error)
	// SetResourceRequirements applies bounds that parsed well; the AM checks them
	// against the vertices and their maxParallelism.
	SetResourceRequirements(ctx context.Context, reqs api.ResourceRequirements, remote string) error
	Rescales(ctx context.Context) (api.Rescales, error)
	Exceptions(ctx context.Context, max int) (api.JobExceptions, error)

	Vertex(ctx context.Context, vertexID string) (api.VertexDetails, error)
	VertexBackPressure(ctx context.Context, vertexID string) (api.VertexBackPressure, error)

	Checkpoints() api.CheckpointingStatistics
	CheckpointConfig(ctx context.Context) (api.CheckpointConfig, error)
	Checkpoint(id int64) (api.CheckpointStatistics, error)
	TriggerCheckpoint(ctx context.Context, triggerID, remote string) (string, error)
	CheckpointOperation(triggerID string) (api.AsyncOperation, error)
	// TriggerSavepoint starts a savepoint into target ("": state.savepoints.dir) in
	// format (CANONICAL or NATIVE, "" for the default); with stop the job is cancelled
	// once it is written.
	TriggerSavepoint(ctx context.Context, target, format, triggerID string, stop bool, remote string) (string, error)
	SavepointOperation(triggerID string) (api.AsyncOperation, error)

	TaskManagers(ctx context.Context) ([]api.TaskManager, error)
	Blocklist(ctx context.Context) (api.Blocklist, error)
	// BlockNode applies a FLIP-224 add request (the raw body) and answers its status:
	// 201 created, 202 merged.
	BlockNode(ctx context.Context, node string, body []byte, remote string) (int, api.BlockedNode, error)
	UnblockNode(ctx context.Context, node, remote string) error

	// Metrics serves GET /metrics (Prometheus).
	Metrics() http.Handler
}

// MaxRequestBody bounds every request body; larger ones are answered 413.
const MaxRequestBody = 1 << 20

// route is one endpoint of the REST API.
type route struct {
	method, pattern string
	handler         http.HandlerFunc
}

// server answers the REST API from its backend.
type server struct {
	b    Backend
	auth *Auth
}

// NewHandler routes tide's REST API (Flink's paths and JSON field names) to b: a known
// path with a method it does not serve is answered 405 with an Allow header, an unknown
// path 404, both in Flink's error shape; mutating calls pass auth's token check first.
// The job's web page (package web) is served at /.
func NewHandler(b Backend, auth *Auth) http.Handler {
	if auth == nil {
		auth = &Auth{}
	}
	s := &server{b: b, auth: auth}
	mux := http.NewServeMux()
	allowed := map[string][]string{}
	var patterns []string
	for _, r := range s.routes() {
		h := r.handler
		if isMutating(r.method) {
			h = s.auth.require(h)
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

// routes lists the endpoints; each resource has its own file.
func (s *server) routes() []route {
	job := s.withJob
	return []route{
		{"GET", "/overview", s.getOverview},
		{"GET", "/config", s.getConfig},
		{"GET", "/jobmanager/config", s.getJobManagerConfig},
		{"GET", "/jobs", s.getJobs},
		{"GET", "/jobs/overview", s.getJobsOverview},
		{"GET", "/jobs/{jobid}", job(s.getJob)},
		{"PATCH", "/jobs/{jobid}", job(s.patchJob)},
		{"GET", "/jobs/{jobid}/status", job(s.getJobStatus)},
		{"GET", "/jobs/{jobid}/plan", job(s.getPlan)},
		{"GET", "/jobs/{jobid}/resource-requirements", job(s.getRequirements)},
		{"PUT", "/jobs/{jobid}/resource-requirements", job(s.putRequirements)},
		{"GET", "/jobs/{jobid}/rescales", job(s.getRescales)},
		{"GET", "/jobs/{jobid}/exceptions", job(s.getExceptions)},
		{"GET", "/jobs/{jobid}/vertices/{vertexid}", job(s.getVertex)},
		{"GET", "/jobs/{jobid}/vertices/{vertexid}/backpressure", job(s.getVertexBackPressure)},
		{"GET", "/jobs/{jobid}/checkpoints", job(s.getCheckpoints)},
		{"POST", "/jobs/{jobid}/checkpoints", job(s.postCheckpoint)},
		{"GET", "/jobs/{jobid}/checkpoints/config", job(s.getCheckpointConfig)},
		{"GET", "/jobs/{jobid}/checkpoints/details/{checkpointid}", job(s.getCheckpointDetails)},
		{"GET", "/jobs/{jobid}/checkpoints/{triggerid}", job(s.getCheckpointTrigger)},
		{"POST", "/jobs/{jobid}/savepoints", job(s.postSavepoint)},
		{"GET", "/jobs/{jobid}/savepoints/{triggerid}", job(s.getSavepointTrigger)},
		{"POST", "/jobs/{jobid}/stop", job(s.postStop)},
		{"GET", "/taskmanagers", s.getTaskManagers},
		{"GET", "/taskmanagers/{tmid}", s.getTaskManager},
		{"GET", "/blocklist", s.getBlocklist},
		// The seed spells the add path /blocklist/nodes/<id> and the remove path
		// /blocklist/node/<id>; tide accepts both spellings and the short /blocklist/<id>.
		{"PUT", "/blocklist/{nodeid}", s.putBlockedNode},
		{"POST", "/blocklist/{nodeid}", s.putBlockedNode},
		{"DELETE", "/blocklist/{nodeid}", s.deleteBlockedNode},
		{"PUT", "/blocklist/nodes/{nodeid}", s.putBlockedNode},
		{"POST", "/blocklist/nodes/{nodeid}", s.putBlockedNode},
		{"DELETE", "/blocklist/nodes/{nodeid}", s.deleteBlockedNode},
		{"DELETE", "/blocklist/node/{nodeid}", s.deleteBlockedNode},
		{"GET", "/metrics", s.getMetrics},
	}
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

// withJob answers 404 for any job id other than the AM's job.
func (s *server) withJob(h http.HandlerFunc) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		if id := r.PathValue("jobid"); id != s.b.JobID() {
			writeError(w, http.StatusNotFound, fmt.Sprintf("Job %s not found (this AM runs job %s)", id, s.b.JobID()))
			return
		}
		h(w, r)
	}
}

// getMetrics serves GET /metrics in the Prometheus text exposition format.
func (s *server) getMetrics(w http.ResponseWriter, r *http.Request) {
	s.b.Metrics().ServeHTTP(w, r)
}
