package yarn

import (
	"context"
	"fmt"
	"log/slog"
	"os"
	"strings"
	"testing"
	"time"

	"google.golang.org/protobuf/proto"

	"github.com/tidestream/tide/internal/hadoop/security"
	"github.com/tidestream/tide/yarn/yarnpb"
)

const (
	amTestEnv          = "TIDE_YARN_TEST_AM"
	amTestSchedulerEnv = "TIDE_YARN_TEST_SCHEDULER"
	amTestMarker       = "tide test AM ran"
)

// runTestAM is the managed ApplicationMaster: AMRMToken from the NodeManager-written
// credentials file, register, one container running /bin/true through its NodeManager,
// unregister with the outcome. It reports failures through the final status diagnostics.
func runTestAM() int {
	log := slog.New(slog.NewTextHandler(os.Stderr, nil))
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	creds, err := security.LoadCredentialsFromEnv()
	if err != nil {
		log.Error("credentials", "err", err)
		return 1
	}
	tok, err := creds.AMRMToken()
	if err != nil {
		log.Error("credentials", "err", err)
		return 1
	}
	self, err := ParseContainerID(os.Getenv("CONTAINER_ID"))
	if err != nil {
		log.Error("own container id", "err", err)
		return 1
	}
	tokens := NewNMTokenCache()
	am, err := DialAMRM(os.Getenv(amTestSchedulerEnv), tok, tokens, log)
	if err != nil {
		log.Error("dial", "err", err)
		return 1
	}
	defer am.Close()
	nm := NewNM(tokens, log)
	defer nm.Close()
	if _, err := am.Register(ctx, os.Getenv("NM_HOST"), 0, ""); err != nil {
		log.Error("register", "err", err)
		return 1
	}
	diag, runErr := testAMWork(ctx, am, nm)
	status := yarnpb.FinalApplicationStatusProto_APP_SUCCEEDED
	if runErr != nil {
		status = yarnpb.FinalApplicationStatusProto_APP_FAILED
		diag = runErr.Error()
	}
	diag = fmt.Sprintf("%s as %s: %s", amTestMarker, AttemptIDString(self.GetAppAttemptId()), diag)
	if err := am.Finish(ctx, status, diag, ""); err != nil {
		log.Error("finish", "err", err)
		return 1
	}
	return 0
}

func testAMWork(ctx context.Context, am *AMRM, nm *NM) (string, error) {
	req := AllocateRequest{Asks: []*yarnpb.ResourceRequestProto{{
		Priority:      &yarnpb.PriorityProto{Priority: proto.Int32(1)},
		ResourceName:  proto.String("*"),
		Capability:    &yarnpb.ResourceProto{Memory: proto.Int64(128), VirtualCores: proto.Int32(1)},
		NumContainers: proto.Int32(1),
	}}}
	var c *yarnpb.ContainerProto
	for c == nil {
		resp, err := am.Allocate(ctx, req)
		if err != nil {
			return "", err
		}
		req = AllocateRequest{}
		if cs := resp.GetAllocatedContainers(); len(cs) > 0 {
			c = cs[0]
			break
		}
		if err := sleep(ctx, 200*time.Millisecond); err != nil {
			return "", err
		}
	}
	if err := nm.StartContainer(ctx, c, &yarnpb.ContainerLaunchContextProto{Command: []string{"/bin/true"}}); err != nil {
		return "", err
	}
	id := ContainerIDString(c.GetId())
	for {
		resp, err := am.Allocate(ctx, AllocateRequest{Progress: 0.5})
		if err != nil {
			return "", err
		}
		for _, s := range resp.GetCompletedContainerStatuses() {
			if ContainerIDString(s.GetContainerId()) == id {
				if s.GetExitStatus() != 0 {
					return "", fmt.Errorf("container %s exited %d: %s", id, s.GetExitStatus(), s.GetDiagnostics())
				}
				return fmt.Sprintf("container %s on %s exited 0", id, NodeIDString(c.GetNodeId())), nil
			}
		}
		if err := sleep(ctx, 200*time.Millisecond); err != nil {
			return "", err
		}
	}
}

func sleep(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return context.Cause(ctx)
	case <-t.C:
		return nil
	}
}

// TestClusterManagedAM submits this test binary as a real AM container: it proves the
// credentials file reader on a NodeManager-written file, SASL with the AMRMToken and an
// NMToken, and the register/allocate/start/finish flow.
func TestClusterManagedAM(t *testing.T) {
	env := requireYARN(t)
	ctx := testCtx(t)
	rm := dialTestRM(t, env)
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	newApp, err := rm.GetNewApplication(ctx)
	if err != nil {
		t.Fatal(err)
	}
	app := newApp.GetApplicationId()
	launch := &yarnpb.ContainerLaunchContextProto{
		Command: []string{exe + " 1><LOG_DIR>/stdout 2><LOG_DIR>/stderr"},
		Environment: []*yarnpb.StringStringMapProto{
			{Key: proto.String(amTestEnv), Value: proto.String("1")},
			{Key: proto.String(amTestSchedulerEnv), Value: proto.String(env.YARNScheduler)},
		},
	}
	if err := rm.SubmitApplication(ctx, submission(app, "tide-managed-am", launch, false), newApp.GetMaximumCapability()); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _, _ = rm.ForceKillApplication(context.Background(), app, "test cleanup") })
	r := waitReport(ctx, t, rm, app, "the end", func(r *yarnpb.ApplicationReportProto) bool {
		switch r.GetYarnApplicationState() {
		case yarnpb.YarnApplicationStateProto_FINISHED, yarnpb.YarnApplicationStateProto_FAILED, yarnpb.YarnApplicationStateProto_KILLED:
			return true
		}
		return false
	})
	if r.GetFinalApplicationStatus() != yarnpb.FinalApplicationStatusProto_APP_SUCCEEDED || !strings.Contains(r.GetDiagnostics(), amTestMarker) {
		t.Fatalf("%s ended %v/%v: %q (AM logs under the NodeManagers' log dirs in %s)", ApplicationIDString(app),
			r.GetYarnApplicationState(), r.GetFinalApplicationStatus(), r.GetDiagnostics(), env.Path)
	}
	t.Logf("%s: %s", ApplicationIDString(app), r.GetDiagnostics())
	if !strings.Contains(r.GetDiagnostics(), "exited 0") {
		t.Errorf("diagnostics %q do not report the container's exit", r.GetDiagnostics())
	}
}
