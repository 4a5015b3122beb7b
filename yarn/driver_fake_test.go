package yarn

import (
	"context"
	"fmt"
	"sync"

	"google.golang.org/protobuf/proto"

	"github.com/tidestream/tide/core"
	"github.com/tidestream/tide/yarn/yarnpb"
)

// fakeRM plays the RM scheduler and the NodeManagers for driver tests: it records every
// ask, blacklist change, release and launch, hands out the containers a test offers and
// reports released or killed containers completed on the next allocate.
type fakeRM struct {
	mu          sync.Mutex
	registered  int
	finished    []yarnpb.FinalApplicationStatusProto
	asks        []int32 // every absolute ask sent, in order
	outstanding int32
	blacklist   map[string]bool
	blAdds      [][]string
	offered     []*yarnpb.ContainerProto // delivered with the next allocate
	completed   []*yarnpb.ContainerStatusProto
	released    map[string]bool
	launched    map[string]core.TaskManagerID // container id → TaskManager id
	allocates   int
	clusterN    int32
	nextID      int64
	refuseStart bool
	previous    []*yarnpb.ContainerProto // containers_from_previous_attempts at Register
	late        []*yarnpb.ContainerProto // containers_from_previous_attempts with the next allocate
	changed     chan struct{}
}

func newFakeRM() *fakeRM {
	return &fakeRM{blacklist: map[string]bool{}, released: map[string]bool{}, launched: map[string]core.TaskManagerID{},
		clusterN: 2, changed: make(chan struct{}, 1)}
}

func (f *fakeRM) signal() {
	select {
	case f.changed <- struct{}{}:
	default:
	}
}

var fakeApp = &yarnpb.ApplicationIdProto{ClusterTimestamp: proto.Int64(1700000000000), Id: proto.Int32(7)}

// offer makes the next allocate hand out a container on host:port and returns its id.
func (f *fakeRM) offer(host string, port int32) string {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.nextID++
	c := &yarnpb.ContainerProto{
		Id: &yarnpb.ContainerIdProto{AppAttemptId: &yarnpb.ApplicationAttemptIdProto{ApplicationId: fakeApp, AttemptId: proto.Int32(1)},
			AppId: fakeApp, Id: proto.Int64(f.nextID)},
		NodeId: &yarnpb.NodeIdProto{Host: proto.String(host), Port: proto.Int32(port)},
	}
	f.offered = append(f.offered, c)
	return ContainerIDString(c.GetId())
}

// kill makes the next allocate report container cid completed with exit.
func (f *fakeRM) kill(cid string, exit int32) {
	id, err := ParseContainerID(cid)
	if err != nil {
		panic(err)
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	f.completed = append(f.completed, &yarnpb.ContainerStatusProto{ContainerId: id, State: yarnpb.ContainerStateProto_C_COMPLETE.Enum(),
		ExitStatus: proto.Int32(exit), Diagnostics: proto.String(fmt.Sprintf("killed by the test (exit %d)", exit))})
}

func (f *fakeRM) Register(context.Context, string, int32, string) (*yarnpb.RegisterApplicationMasterResponseProto, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.registered++
	return &yarnpb.RegisterApplicationMasterResponseProto{
		MaximumCapability:              &yarnpb.ResourceProto{Memory: proto.Int64(2048), VirtualCores: proto.Int32(4)},
		Queue:                          proto.String("default"),
		ContainersFromPreviousAttempts: f.previous,
	}, nil
}

func (f *fakeRM) UpdateBlacklist(additions, removals []string) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	for _, n := range additions {
		f.blacklist[n] = true
	}
	for _, n := range removals {
		delete(f.blacklist, n)
	}
	if len(additions) > 0 {
		f.blAdds = append(f.blAdds, additions)
	}
	return nil
}

func (f *fakeRM) Allocate(_ context.Context, r AllocateRequest) (*yarnpb.AllocateResponseProto, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	defer f.signal()
	f.allocates++
	for _, a := range r.Asks {
		f.asks = append(f.asks, a.GetNumContainers())
		f.outstanding = a.GetNumContainers()
	}
	resp := &yarnpb.AllocateResponseProto{NumClusterNodes: proto.Int32(f.clusterN)}
	for _, id := range r.Releases {
		cid := ContainerIDString(id)
		f.released[cid] = true
		resp.CompletedContainerStatuses = append(resp.CompletedContainerStatuses, &yarnpb.ContainerStatusProto{
			ContainerId: id, State: yarnpb.ContainerStateProto_C_COMPLETE.Enum(), ExitStatus: proto.Int32(-105),
			Diagnostics: proto.String("Container released by the AM")})
	}
	// Offered containers are handed out even on blacklisted nodes: the race of an
	// allocation made before the blacklist arrived, which the driver must handle.
	resp.AllocatedContainers, f.offered = f.offered, nil
	resp.ContainersFromPreviousAttempts, f.late = f.late, nil
	f.outstanding = max(0, f.outstanding-int32(len(resp.AllocatedContainers)))
	resp.CompletedContainerStatuses = append(resp.CompletedContainerStatuses, f.completed...)
	f.completed = nil
	return resp, nil
}

func (f *fakeRM) Finish(_ context.Context, status yarnpb.FinalApplicationStatusProto, _, _ string) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.finished = append(f.finished, status)
	return nil
}

func (f *fakeRM) Close() error { return nil }

// fakeNM is the NodeManagers' side of fakeRM.
type fakeNM struct{ f *fakeRM }

func (n fakeNM) StartContainer(_ context.Context, c *yarnpb.ContainerProto, launch *yarnpb.ContainerLaunchContextProto) error {
	n.f.mu.Lock()
	defer n.f.mu.Unlock()
	defer n.f.signal()
	cid := ContainerIDString(c.GetId())
	if n.f.refuseStart {
		return &ContainerError{ContainerID: cid, Node: NodeIDString(c.GetNodeId()), Class: "org.apache.hadoop.yarn.exceptions.YarnException", Message: "refused by the test"}
	}
	var id core.TaskManagerID
	for _, e := range launch.GetEnvironment() {
		if e.GetKey() == "TIDE_TM_ID" {
			id = core.TaskManagerID(e.GetValue())
		}
	}
	n.f.launched[cid] = id
	return nil
}

func (n fakeNM) Close() error { return nil }

type fakeNodes []string

func (l fakeNodes) RunningNodes(context.Context) ([]string, error) { return l, nil }

// fakeLaunch records the TaskManager id and node in the environment.
func fakeLaunch(id core.TaskManagerID, node core.NodeID) *yarnpb.ContainerLaunchContextProto {
	return &yarnpb.ContainerLaunchContextProto{
		Command: []string{"tide taskmanager"},
		Environment: []*yarnpb.StringStringMapProto{
			{Key: proto.String("TIDE_TM_ID"), Value: proto.String(string(id))},
			{Key: proto.String("TIDE_NODE"), Value: proto.String(string(node))},
		},
	}
}

// await waits until cond holds (checked under f.mu after every fake call) or ctx ends.
func (f *fakeRM) await(ctx context.Context, what string, cond func() bool) error {
	for {
		f.mu.Lock()
		ok := cond()
		f.mu.Unlock()
		if ok {
			return nil
		}
		select {
		case <-f.changed:
		case <-ctx.Done():
			return fmt.Errorf("waiting for %s: %w", what, ctx.Err())
		}
	}
}
