package yarn

import (
	"context"

	"strings"
	"testing"
	"time"

	"google.golang.org/protobuf/proto"

	"github.com/tidestream/tide/internal/hadoop/security"
	"github.com/tidestream/tide/yarn/yarnpb"
)

// waitReport polls app's report until done says so, failing the test at the context's end.
func waitReport(ctx context.Context, t *testing.T, rm *ClientRM, app *yarnpb.ApplicationIdProto, what string, done func(*yarnpb.ApplicationReportProto) bool) *yarnpb.ApplicationReportProto {
	t.Helper()
	var last *yarnpb.ApplicationReportProto
	for {
		r, err := rm.GetApplicationReport(ctx, app)
		if err != nil {
			t.Fatalf("waiting for %s: %v", what, err)
		}
		last = r
		if done(r) {
			return r
		}
		select {
		case <-ctx.Done():
			t.Fatalf("%s: %s never came; last report: state %v, diagnostics %q", ApplicationIDString(app), what, last.GetYarnApplicationState(), last.GetDiagnostics())
		case <-time.After(100 * time.Millisecond):
		}
	}
}

func submission(app *yarnpb.ApplicationIdProto, name string, launch *yarnpb.ContainerLaunchContextProto, unmanaged bool) *yarnpb.ApplicationSubmissionContextProto {
	return &yarnpb.ApplicationSubmissionContextProto{
		ApplicationId:   app,
		ApplicationName: proto.String(name),
		Queue:           proto.String("default"),
		AmContainerSpec: launch,
		UnmanagedAm:     proto.Bool(unmanaged),
		MaxAppAttempts:  proto.Int32(1),
		Resource:        &yarnpb.ResourceProto{Memory: proto.Int64(128), VirtualCores: proto.Int32(1)},
		ApplicationType: proto.String("TIDE-TEST"),
	}
}

func TestClusterSubmitAndKill(t *testing.T) {
	env := requireYARN(t)
	ctx := testCtx(t)
	rm := dialTestRM(t, env)
	newApp, err := rm.GetNewApplication(ctx)
	if err != nil {
		t.Fatal(err)
	}
	app := newApp.GetApplicationId()
	launch := &yarnpb.ContainerLaunchContextProto{
		Command:     []string{"sleep 300 1><LOG_DIR>/stdout 2><LOG_DIR>/stderr"},
		Environment: []*yarnpb.StringStringMapProto{{Key: proto.String("TIDE_TEST"), Value: proto.String("1")}},
	}
	if err := rm.SubmitApplication(ctx, submission(app, "tide-sleep", launch, false), newApp.GetMaximumCapability()); err != nil {
		t.Fatal(err)
	}
	r := waitReport(ctx, t, rm, app, "RUNNING", func(r *yarnpb.ApplicationReportProto) bool {
		s := r.GetYarnApplicationState()
		if s == yarnpb.YarnApplicationStateProto_FAILED || s == yarnpb.YarnApplicationStateProto_KILLED || s == yarnpb.YarnApplicationStateProto_FINISHED {
			t.Fatalf("application ended early: %v %q", s, r.GetDiagnostics())
		}
		// An AM that never registers stays ACCEPTED with its attempt LAUNCHED; the sleep
		// container running is as far as it gets.
		return s == yarnpb.YarnApplicationStateProto_ACCEPTED && r.GetCurrentApplicationAttemptId() != nil &&
			strings.Contains(r.GetDiagnostics(), "AM container is launched") || s == yarnpb.YarnApplicationStateProto_RUNNING
	})
	t.Logf("%s: %v, %q", ApplicationIDString(app), r.GetYarnApplicationState(), r.GetDiagnostics())
	if r.GetName() != "tide-sleep" || !strings.HasSuffix(r.GetQueue(), "default") || r.GetUser() != testUser(t) || r.GetApplicationType() != "TIDE-TEST" {
		t.Errorf("report: name %q queue %q user %q type %q", r.GetName(), r.GetQueue(), r.GetUser(), r.GetApplicationType())
	}
	for {
		done, err := rm.ForceKillApplication(ctx, app, "killed by tide's test")
		if err != nil {
			t.Fatal(err)
		}
		if done {
			break
		}
		time.Sleep(100 * time.Millisecond)
	}
	r = waitReport(ctx, t, rm, app, "KILLED", func(r *yarnpb.ApplicationReportProto) bool {
		return r.GetYarnApplicationState() == yarnpb.YarnApplicationStateProto_KILLED
	})
	if r.GetFinalApplicationStatus() != yarnpb.FinalApplicationStatusProto_APP_KILLED {
		t.Errorf("final status %v", r.GetFinalApplicationStatus())
	}
}

func TestClusterSubmitTooLarge(t *testing.T) {
	env := requireYARN(t)
	ctx := testCtx(t)
	rm := dialTestRM(t, env)
	newApp, err := rm.GetNewApplication(ctx)
	if err != nil {
		t.Fatal(err)
	}
	sub := submission(newApp.GetApplicationId(), "too-large", &yarnpb.ContainerLaunchContextProto{Command: []string{"true"}}, false)
	sub.Resource.Memory = proto.Int64(newApp.GetMaximumCapability().GetMemory() * 2)
	// Checked locally against the maximum the RM announced...
	err = rm.SubmitApplication(ctx, sub, newApp.GetMaximumCapability())
	if !isErr(err, ErrResourceTooLarge) || !strings.Contains(err.Error(), "4096 MB") {
		t.Errorf("local check: %v", err)
	}
	// ...and refused by the RM itself.
	err = rm.SubmitApplication(ctx, sub, nil)
	if !isErr(err, ErrResourceTooLarge) {
		t.Errorf("RM check: %v, want ErrResourceTooLarge", err)
	}
}

func TestClientRMUnreachable(t *testing.T) {
	rm, err := DialClientRM("127.0.0.1:1", "nobody", nil)
	if err != nil {
		t.Fatal(err)
	}
	defer rm.Close()
	_, err = rm.GetNewApplication(testCtx(t))
	if !isErr(err, ErrRMUnreachable) || !strings.Contains(err.Error(), "127.0.0.1:1") {
		t.Fatalf("err = %v, want ErrRMUnreachable naming the address", err)
	}
}

// TestClusterUnmanagedAM runs an ApplicationMaster inside the test: register with the
// AMRMToken from the report (SASL DIGEST-MD5 against the real scheduler port), blacklist one
// NodeManager and see the container placed on the other, start /bin/true in it through the
// NodeManager with its NMToken, see it complete, unregister.
func TestClusterUnmanagedAM(t *testing.T) {
	env := requireYARN(t)
	if len(env.NodeManagers) != 2 {
		t.Fatalf("the harness runs %d NodeManagers, want 2", len(env.NodeManagers))
	}
	ctx := testCtx(t)
	rm := dialTestRM(t, env)
	newApp, err := rm.GetNewApplication(ctx)
	if err != nil {
		t.Fatal(err)
	}
	app := newApp.GetApplicationId()
	if err := rm.SubmitApplication(ctx, submission(app, "tide-unmanaged", &yarnpb.ContainerLaunchContextProto{}, true), nil); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _, _ = rm.ForceKillApplication(context.Background(), app, "test cleanup") })
	r := waitReport(ctx, t, rm, app, "the AMRMToken", func(r *yarnpb.ApplicationReportProto) bool { return r.GetAmRmToken() != nil })
	amrmToken := security.TokenFromProto(r.GetAmRmToken())
	if amrmToken.Kind != security.KindAMRMToken {
		t.Fatalf("report token kind %q", amrmToken.Kind)
	}

	tokens := NewNMTokenCache()
	am, err := DialAMRM(env.YARNScheduler, amrmToken, tokens, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer am.Close()
	nm := NewNM(tokens, nil)
	defer nm.Close()

	reg, err := am.Register(ctx, "localhost", 0, "http://localhost:8081")
	if err != nil {
		t.Fatalf("register: %v", err)
	}
	if reg.GetMaximumCapability().GetMemory() != newApp.GetMaximumCapability().GetMemory() {
		t.Errorf("register max capability %v", reg.GetMaximumCapability())
	}

	blocked, free := env.NodeManagers[0], env.NodeManagers[1]
	if err := am.UpdateBlacklist([]string{blocked}, nil); err != nil {
		t.Fatal(err)
	}
	if err := am.UpdateBlacklist([]string{"*"}, nil); err == nil {
		t.Error(`blacklisting "*" was accepted`)
	}
	ask := &yarnpb.ResourceRequestProto{
		Priority:      &yarnpb.PriorityProto{Priority: proto.Int32(1)},
		ResourceName:  proto.String("*"),
		Capability:    &yarnpb.ResourceProto{Memory: proto.Int64(128), VirtualCores: proto.Int32(1)},
		NumContainers: proto.Int32(2),
		RelaxLocality: proto.Bool(true),
	}
	var got []*yarnpb.ContainerProto
	req := AllocateRequest{Asks: []*yarnpb.ResourceRequestProto{ask}}
	for len(got) < 2 {
		resp, err := am.Allocate(ctx, req)
		if err != nil {
			t.Fatalf("allocate: %v", err)
		}
		req = AllocateRequest{Progress: 0.1}
		if resp.GetNumClusterNodes() != 2 {
			t.Errorf("num_cluster_nodes %d", resp.GetNumClusterNodes())
		}
		got = append(got, resp.GetAllocatedContainers()...)
		if len(got) < 2 {
			sleepCtx(ctx, t, 200*time.Millisecond)
		}
	}
	for _, c := range got {
		if n := NodeIDString(c.GetNodeId()); n != free {
			t.Errorf("container %s placed on blacklisted %s", ContainerIDString(c.GetId()), n)
		}
		if _, ok := tokens.Get(NodeIDString(c.GetNodeId())); !ok {
			t.Errorf("no NMToken cached for %s", NodeIDString(c.GetNodeId()))
		}
	}
	if bl := am.Blacklisted(); len(bl) != 1 || bl[0] != blocked {
		t.Errorf("Blacklisted() = %v", bl)
	}

	// Run /bin/true in the first container, release the second unused.
	c := got[0]
	launch := &yarnpb.ContainerLaunchContextProto{Command: []string{"/bin/true 1><LOG_DIR>/stdout 2><LOG_DIR>/stderr"}}
	if err := nm.StartContainer(ctx, c, launch); err != nil {
		t.Fatalf("start container: %v", err)
	}
	// Starting it twice is refused per container, not as an RPC error.
	if err := nm.StartContainer(ctx, c, launch); !isContainerError(err) {
		t.Errorf("second start: %v, want a *ContainerError", err)
	}
	req = AllocateRequest{Releases: []*yarnpb.ContainerIdProto{got[1].GetId()}}
	completed := map[string]*yarnpb.ContainerStatusProto{}
	want := ContainerIDString(c.GetId())
	for completed[want] == nil {
		resp, err := am.Allocate(ctx, req)
		if err != nil {
			t.Fatalf("allocate: %v", err)
		}
		req = AllocateRequest{Progress: 0.5}
		for _, s := range resp.GetCompletedContainerStatuses() {
			completed[ContainerIDString(s.GetContainerId())] = s
		}
		if completed[want] == nil {
			sleepCtx(ctx, t, 200*time.Millisecond)
		}
	}
	if s := completed[want]; s.GetExitStatus() != 0 || s.GetState() != yarnpb.ContainerStateProto_C_COMPLETE {
		t.Errorf("container %s: state %v exit %d diagnostics %q", want, s.GetState(), s.GetExitStatus(), s.GetDiagnostics())
	}

	if err := am.Finish(ctx, yarnpb.FinalApplicationStatusProto_APP_SUCCEEDED, "done", ""); err != nil {
		t.Fatalf("finish: %v", err)
	}
	r = waitReport(ctx, t, rm, app, "FINISHED", func(r *yarnpb.ApplicationReportProto) bool {
		return r.GetYarnApplicationState() == yarnpb.YarnApplicationStateProto_FINISHED
	})
	if r.GetFinalApplicationStatus() != yarnpb.FinalApplicationStatusProto_APP_SUCCEEDED {
		t.Errorf("final status %v, diagnostics %q", r.GetFinalApplicationStatus(), r.GetDiagnostics())
	}
}

func sleepCtx(ctx context.Context, t *testing.T, d time.Duration) {
	t.Helper()
	select {
	case <-ctx.Done():
		t.Fatalf("test deadline: %v", context.Cause(ctx))
	case <-time.After(d):
	}
}

func isContainerError(err error) bool {
	var ce *ContainerError
	return asErr(err, &ce)
}
