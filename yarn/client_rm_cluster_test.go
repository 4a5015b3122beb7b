package yarn

import (
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/tidestream/tide/yarn/yarnpb"
)

func TestClusterClientRMBasics(t *testing.T) {
	env := requireYARN(t)
	ctx := testCtx(t)
	rm := dialTestRM(t, env)

	app, err := rm.GetNewApplication(ctx)
	if err != nil {
		t.Fatal(err)
	}
	id := ApplicationIDString(app.GetApplicationId())
	if !strings.HasPrefix(id, "application_") || app.GetMaximumCapability().GetMemory() != 2048 {
		t.Errorf("new application %s, max capability %v (the harness sets 2048 MB)", id, app.GetMaximumCapability())
	}
	next, err := rm.GetNewApplication(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if next.GetApplicationId().GetId() != app.GetApplicationId().GetId()+1 {
		t.Errorf("second application id %s after %s", ApplicationIDString(next.GetApplicationId()), id)
	}

	m, err := rm.GetClusterMetrics(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if m.GetNumNodeManagers() != 2 {
		t.Errorf("cluster metrics report %d node managers, want 2: %v", m.GetNumNodeManagers(), m)
	}

	nodes, err := rm.GetClusterNodes(ctx, yarnpb.NodeStateProto_NS_RUNNING)
	if err != nil {
		t.Fatal(err)
	}
	var ids []string
	for _, n := range nodes {
		ids = append(ids, NodeIDString(n.GetNodeId()))
	}
	slices.Sort(ids)
	want := slices.Clone(env.NodeManagers)
	slices.Sort(want)
	if !slices.Equal(ids, want) {
		t.Errorf("running nodes %v, want the harness's %v", ids, want)
	}

	q, err := rm.GetQueueInfo(ctx, "default")
	if err != nil {
		t.Fatal(err)
	}
	if q.GetQueueName() != "default" || q.GetState() != yarnpb.QueueStateProto_Q_RUNNING {
		t.Errorf("queue info %v", q)
	}
	_, err = rm.GetQueueInfo(ctx, "no-such-queue")
	if !errors.Is(err, ErrQueueNotFound) {
		t.Errorf("GetQueueInfo(no-such-queue) = %v, want ErrQueueNotFound", err)
	}
	_, err = rm.GetApplicationReport(ctx, &yarnpb.ApplicationIdProto{ClusterTimestamp: app.GetApplicationId().ClusterTimestamp, Id: ptr(int32(9999))})
	if !errors.Is(err, ErrApplicationNotFound) {
		t.Errorf("report of an unknown application: %v, want ErrApplicationNotFound", err)
	}
}

func ptr[T any](v T) *T { return &v }
