package api_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"net"
	"net/http"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/tidestream/tide/am"
	"github.com/tidestream/tide/api"
	"github.com/tidestream/tide/conf"
	"github.com/tidestream/tide/examples"
	"github.com/tidestream/tide/internal/testkit"
	"github.com/tidestream/tide/storage"
	"github.com/tidestream/tide/stream"
	"github.com/tidestream/tide/tm/worker"
)

const jobID = "0123456789abcdef0123456789abcdef"

// startAM runs a CheckableCount job in an AM and one TaskManager of two slots in this
// process, over loopback, and returns a client of its REST API.
func startAM(t *testing.T) *api.Client {
	t.Helper()
	return startJob(t, examples.CheckableCountName,
		[]string{"--records", "100000000", "--rate", "500", "--parallelism", "1", "--output", t.TempDir()})
}

// startJob runs the registered job name with args in an AM and one TaskManager of two
// slots in this process, over loopback, and returns a client of its REST API.
func startJob(t *testing.T, name string, args []string) *api.Client {
	t.Helper()
	ckpt := t.TempDir()
	build, ok := stream.Lookup(name)
	if !ok {
		t.Fatalf("job %s not registered", name)
	}
	job, err := build(args)
	if err != nil {
		t.Fatal(err)
	}
	cfg, _, err := conf.Load("", []string{
		"jobmanager.adaptive-scheduler.submission.resource-stabilization-timeout=0 s",
		"jobmanager.adaptive-scheduler.executing.cooldown-after-rescaling=0 s",
		"jobmanager.adaptive-scheduler.executing.resource-stabilization-timeout=0 s",
		"execution.checkpointing.interval=200 ms", "state.checkpoints.dir=file://" + ckpt})
	if err != nil {
		t.Fatal(err)
	}
	st, err := storage.Open(context.Background(), "file://"+ckpt, storage.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	rpcLn, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	restLn, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	a, err := am.New(am.Config{
		JobID: jobID, JobName: name, JobArgs: args, Job: job,
		Options: am.SchedulerOptions(cfg), Conf: cfg.Map(), Storage: st,
		CheckpointInterval: 200 * time.Millisecond, CheckpointTimeout: time.Minute, NumRetained: 2,
		HeartbeatInterval: time.Second, Logger: testkit.Logger().With("process", "am"),
		RPCListener: rpcLn, RESTListener: restLn,
	})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	wg.Add(2)
	go func() {
		defer wg.Done()
		if _, err := a.Run(ctx); err != nil {
			t.Errorf("AM: %v", err)
		}
	}()
	go func() {
		defer wg.Done()
		err := worker.Run(ctx, worker.Config{AMAddress: a.RPCAddr(), ID: "tm-a", NodeID: "node-a", Slots: 2,
			ConnectTimeout: 5 * time.Second, Logger: testkit.Logger().With("process", "tm-a")})
		if err != nil {
			t.Logf("TaskManager: %v", err)
		}
	}()
	t.Cleanup(func() { cancel(); wg.Wait() })
	c, err := api.NewClient(api.Config{Address: a.RESTAddr()})
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// strict decodes raw into v refusing fields v does not have: the public types must know
// every field the AM sends.
func strict(t *testing.T, what string, raw json.RawMessage, v any) {
	t.Helper()
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		t.Errorf("%s: the AM sends what the api types do not know: %v\n%s", what, err, raw)
	}
}

// TestClientAgainstAM drives a real AM through every call of the client, and checks that
// each answer decodes into the public types without a field left over.
func TestClientAgainstAM(t *testing.T) {
	c := startAM(t)
	ctx := t.Context()
	var job api.JobDetails
	testkit.WaitFor(t, "the job RUNNING at parallelism 1", func() (bool, error) {
		var err error
		job, err = c.Job(ctx, jobID)
		return err == nil && job.State == api.StateRunning && len(job.Vertices) > 0 && job.Vertices[0].Tasks["RUNNING"] > 0, err
	})

	jobs, err := c.Jobs(ctx)
	if err != nil || len(jobs) != 1 || jobs[0].JID != jobID || jobs[0].Name != examples.CheckableCountName {
		t.Fatalf("Jobs = %+v, %v", jobs, err)
	}
	if state, err := c.JobState(ctx, jobID); err != nil || state != api.StateRunning {
		t.Errorf("JobState = %q, %v", state, err)
	}
	ov, err := c.Overview(ctx)
	if err != nil || ov.TaskManagers != 1 || ov.SlotsTotal != 2 || ov.JobsRunning != 1 {
		t.Errorf("Overview = %+v, %v", ov, err)
	}
	tms, err := c.TaskManagers(ctx)
	if err != nil || len(tms) != 1 || tms[0].ID != "tm-a" || tms[0].Node != "node-a" || tms[0].SlotsNumber != 2 {
		t.Fatalf("TaskManagers = %+v, %v", tms, err)
	}
	if tm, err := c.TaskManager(ctx, "tm-a"); err != nil || tm.ID != "tm-a" {
		t.Errorf("TaskManager = %+v, %v", tm, err)
	}

	// Rescale to 2 through the requirements.
	reqs, err := c.ResourceRequirements(ctx, jobID)
	if err != nil || len(reqs) != len(job.Vertices) {
		t.Fatalf("ResourceRequirements = %+v, %v", reqs, err)
	}
	for id := range reqs {
		reqs[id] = api.VertexRequirements{Parallelism: api.Bounds{LowerBound: 1, UpperBound: 2}}
	}
	if err := c.SetResourceRequirements(ctx, jobID, reqs); err != nil {
		t.Fatal(err)
	}
	testkit.WaitFor(t, "the job RUNNING at parallelism 2", func() (bool, error) {
		job, err = c.Job(ctx, jobID)
		return err == nil && job.State == api.StateRunning && job.Vertices[0].Parallelism == 2, err
	})
	rescales, err := c.Rescales(ctx, jobID)
	if h := rescales.Rescales; err != nil || len(h) < 2 || h[len(h)-1].Vertices[0].After != 2 {
		t.Errorf("Rescales = %+v, %v", rescales, err)
	}

	// A checkpoint, triggered and polled.
	trigger, err := c.TriggerCheckpoint(ctx, jobID, api.CheckpointTriggerRequest{})
	if err != nil || trigger == "" {
		t.Fatalf("TriggerCheckpoint = %q, %v", trigger, err)
	}
	var op api.AsyncOperation
	testkit.WaitFor(t, "the checkpoint complete", func() (bool, error) {
		op, err = c.CheckpointOperation(ctx, jobID, trigger)
		return err == nil && op.Done(), err
	})
	if op.Failure() != "" || op.Operation == nil || op.Operation.CheckpointID < 1 {
		t.Fatalf("checkpoint operation %+v", op)
	}
	stats, err := c.Checkpoints(ctx, jobID)
	if err != nil || stats.Counts.Completed < 1 || stats.Latest.Completed == nil {
		t.Fatalf("Checkpoints = %+v, %v", stats, err)
	}
	if one, err := c.Checkpoint(ctx, jobID, stats.History[0].ID); err != nil || one.ID != stats.History[0].ID {
		t.Errorf("Checkpoint(%d) = %+v, %v", stats.History[0].ID, one, err)
	}

	// Block and unblock the TaskManager's node.
	n, err := c.BlockNode(ctx, "node-a", api.BlockNodeRequest{Action: api.ActionMarkBlocked, Cause: "api test"})
	if err != nil || n.Cause != "api test" || len(n.TaskManagers) != 1 {
		t.Fatalf("BlockNode = %+v, %v", n, err)
	}
	if bl, err := c.Blocklist(ctx); err != nil || bl["node-a"].Action != api.ActionMarkBlocked {
		t.Errorf("Blocklist = %+v, %v", bl, err)
	}
	if _, err := c.BlockNode(ctx, "node-a", api.BlockNodeRequest{Action: api.ActionMarkBlocked, Cause: "again"}); !api.IsStatus(err, http.StatusConflict) {
		t.Errorf("blocking twice: %v, want 409", err)
	}
	if err := c.UnblockNode(ctx, "node-a"); err != nil {
		t.Fatal(err)
	}
	if err := c.UnblockNode(ctx, "node-a"); !api.IsStatus(err, http.StatusNotFound) {
		t.Errorf("unblocking twice: %v, want 404", err)
	}
	if p, err := c.Plan(ctx, jobID); err != nil || len(p.Nodes) != len(job.Vertices) || p.Nodes[0].Parallelism != 2 {
		t.Errorf("Plan = %+v, %v", p, err)
	}
	if cc, err := c.CheckpointConfig(ctx, jobID); err != nil || !cc.CheckpointsEnabled || cc.Interval != 200 {
		t.Errorf("CheckpointConfig = %+v, %v", cc, err)
	}
	if _, err := c.Exceptions(ctx, jobID, 5); err != nil {
		t.Errorf("Exceptions: %v", err)
	}
	if _, err := c.Job(ctx, "ffffffffffffffffffffffffffffffff"); !api.IsStatus(err, http.StatusNotFound) {
		t.Errorf("unknown job: %v, want 404", err)
	}

	// Every answer decodes into the public types without a field left over.
	for _, tt := range []struct {
		path string
		into any
	}{
		{"/overview", &api.ClusterOverview{}},
		{"/jobs", &api.JobIDsStatus{}},
		{"/jobs/overview", &api.JobsOverview{}},
		{"/jobs/" + jobID, &api.JobDetails{}},
		{"/jobs/" + jobID + "/status", &api.JobStatus{}},
		{"/jobs/" + jobID + "/resource-requirements", &api.ResourceRequirements{}},
		{"/jobs/" + jobID + "/rescales", &api.Rescales{}},
		{"/jobs/" + jobID + "/checkpoints", &api.CheckpointingStatistics{}},
		{"/jobs/" + jobID + "/checkpoints/" + trigger, &api.AsyncOperation{}},
		{"/jobs/" + jobID + "/exceptions", &api.JobExceptions{}},
		{"/jobmanager/config", &[]api.ConfigEntry{}},
		{"/config", &api.DashboardConfig{}},
		{"/jobs/" + jobID + "/plan", &api.JobPlan{}},
		{"/jobs/" + jobID + "/checkpoints/config", &api.CheckpointConfig{}},
		{"/jobs/" + jobID + "/checkpoints/details/" + strconv.FormatInt(stats.History[0].ID, 10), &api.CheckpointStatistics{}},
		{"/taskmanagers", &api.TaskManagers{}},
		{"/blocklist", &api.Blocklist{}},
	} {
		raw, err := c.Raw(ctx, http.MethodGet, tt.path, nil)
		if err != nil {
			t.Errorf("GET %s: %v", tt.path, err)
			continue
		}
		strict(t, tt.path, raw, tt.into)
	}

	if err := c.CancelJob(ctx, jobID); err != nil {
		t.Fatal(err)
	}
	testkit.WaitFor(t, "the job CANCELED", func() (bool, error) {
		state, err := c.JobState(ctx, jobID)
		var ue *api.UnreachableError
		return state == api.StateCanceled || errors.As(err, &ue), nil
	})
}
