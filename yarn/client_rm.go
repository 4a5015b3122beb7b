package yarn

import (
	"context"
	"fmt"
	"log/slog"
	"strings"

	"google.golang.org/protobuf/proto"

	"github.com/tidestream/tide/internal/hadoop/ipc"
	"github.com/tidestream/tide/yarn/yarnpb"
)

// ClientRM is a client of the ResourceManager's ApplicationClientProtocol (the client port,
// yarn.resourcemanager.address, default 8032), authenticating with SIMPLE as user.
type ClientRM struct {
	c *ipc.Client
}

// DialClientRM returns a client for the RM at addr (host:port). It connects on first use.
func DialClientRM(addr, user string, log *slog.Logger) (*ClientRM, error) {
	c, err := ipc.New(ipc.Config{Addr: addr, Protocol: ProtocolApplicationClient, User: user, Logger: log})
	if err != nil {
		return nil, fmt.Errorf("YARN client for ResourceManager %s: %w", addr, err)
	}
	return &ClientRM{c: c}, nil
}

// Addr is the ResourceManager's address.
func (r *ClientRM) Addr() string { return r.c.Addr() }

// Close closes the connection.
func (r *ClientRM) Close() error { return r.c.Close() }

func (r *ClientRM) call(ctx context.Context, method string, req, resp proto.Message) error {
	if err := r.c.Call(ctx, method, req, resp); err != nil {
		return wrapRM(r.c.Addr(), method, err)
	}
	return nil
}

// GetNewApplication asks for a new application id and learns the largest container the
// cluster allows.
func (r *ClientRM) GetNewApplication(ctx context.Context) (*yarnpb.GetNewApplicationResponseProto, error) {
	resp := &yarnpb.GetNewApplicationResponseProto{}
	if err := r.call(ctx, "getNewApplication", &yarnpb.GetNewApplicationRequestProto{}, resp); err != nil {
		return nil, err
	}
	return resp, nil
}

// SubmitApplication submits an application. When maxCapability is known (from
// GetNewApplication) an AM container larger than it fails here with ErrResourceTooLarge;
// the RM's own refusal is mapped to the same error.
func (r *ClientRM) SubmitApplication(ctx context.Context, sub *yarnpb.ApplicationSubmissionContextProto, maxCapability *yarnpb.ResourceProto) error {
	app := ApplicationIDString(sub.GetApplicationId())
	if err := CheckFits(sub.GetResource(), maxCapability); err != nil {
		return fmt.Errorf("submitting %s: AM container: %w", app, err)
	}
	if err := r.call(ctx, "submitApplication", &yarnpb.SubmitApplicationRequestProto{ApplicationSubmissionContext: sub}, &yarnpb.SubmitApplicationResponseProto{}); err != nil {
		return fmt.Errorf("submitting %s to queue %q: %w", app, sub.GetQueue(), err)
	}
	return nil
}

// CheckFits returns ErrResourceTooLarge, naming both sizes, when want exceeds max in memory
// or vcores. A nil max accepts anything.
func CheckFits(want, max *yarnpb.ResourceProto) error {
	if max == nil || want == nil {
		return nil
	}
	if want.GetMemory() > max.GetMemory() || want.GetVirtualCores() > max.GetVirtualCores() {
		return fmt.Errorf("%w: asked %d MB / %d vcores, maximum %d MB / %d vcores",
			ErrResourceTooLarge, want.GetMemory(), want.GetVirtualCores(), max.GetMemory(), max.GetVirtualCores())
	}
	return nil
}

// GetApplicationReport returns the RM's report on app.
func (r *ClientRM) GetApplicationReport(ctx context.Context, app *yarnpb.ApplicationIdProto) (*yarnpb.ApplicationReportProto, error) {
	resp := &yarnpb.GetApplicationReportResponseProto{}
	if err := r.call(ctx, "getApplicationReport", &yarnpb.GetApplicationReportRequestProto{ApplicationId: app}, resp); err != nil {
		return nil, fmt.Errorf("report of %s: %w", ApplicationIDString(app), err)
	}
	return resp.GetApplicationReport(), nil
}

// ForceKillApplication asks the RM to kill app; it returns whether the kill is complete (the
// RM answers false until the application has reached a final state; call again to poll).
func (r *ClientRM) ForceKillApplication(ctx context.Context, app *yarnpb.ApplicationIdProto, diagnostics string) (bool, error) {
	req := &yarnpb.KillApplicationRequestProto{ApplicationId: app}
	if diagnostics != "" {
		req.Diagnostics = proto.String(diagnostics)
	}
	resp := &yarnpb.KillApplicationResponseProto{}
	if err := r.call(ctx, "forceKillApplication", req, resp); err != nil {
		return false, fmt.Errorf("killing %s: %w", ApplicationIDString(app), err)
	}
	return resp.GetIsKillCompleted(), nil
}

// GetClusterMetrics returns the node manager counts.
func (r *ClientRM) GetClusterMetrics(ctx context.Context) (*yarnpb.YarnClusterMetricsProto, error) {
	resp := &yarnpb.GetClusterMetricsResponseProto{}
	if err := r.call(ctx, "getClusterMetrics", &yarnpb.GetClusterMetricsRequestProto{}, resp); err != nil {
		return nil, err
	}
	return resp.GetClusterMetrics(), nil
}

// GetClusterNodes lists the nodes in the given states (all states when none is given).
func (r *ClientRM) GetClusterNodes(ctx context.Context, states ...yarnpb.NodeStateProto) ([]*yarnpb.NodeReportProto, error) {
	resp := &yarnpb.GetClusterNodesResponseProto{}
	if err := r.call(ctx, "getClusterNodes", &yarnpb.GetClusterNodesRequestProto{NodeStates: states}, resp); err != nil {
		return nil, err
	}
	return resp.GetNodeReports(), nil
}

// GetQueueInfo describes queue; a queue the scheduler does not know gives ErrQueueNotFound.
func (r *ClientRM) GetQueueInfo(ctx context.Context, queue string) (*yarnpb.QueueInfoProto, error) {
	resp := &yarnpb.GetQueueInfoResponseProto{}
	err := r.c.Call(ctx, "getQueueInfo", &yarnpb.GetQueueInfoRequestProto{QueueName: proto.String(queue)}, resp)
	if err != nil {
		// The schedulers answer an unknown queue with an IOException "Unknown queue: <name>"
		// (capacity) or a null queue info (fair); both mean the same to the user.
		if msg := strings.ToLower(remoteMessage(err)); strings.Contains(msg, "unknown queue") || strings.Contains(msg, "not found") || strings.Contains(msg, "not exist") {
			return nil, fmt.Errorf("queue %q: %w: %w", queue, ErrQueueNotFound, err)
		}
		return nil, wrapRM(r.c.Addr(), "getQueueInfo "+queue, err)
	}
	if resp.GetQueueInfo() == nil {
		return nil, fmt.Errorf("queue %q: %w (the ResourceManager returned no queue info)", queue, ErrQueueNotFound)
	}
	return resp.GetQueueInfo(), nil
}
