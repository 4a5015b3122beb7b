package yarn

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"time"

	"github.com/tidestream/tide/core"
	"github.com/tidestream/tide/yarn/yarnpb"
)

// DriverName is the YARN driver's registry name.
const DriverName = "yarn"

// SchedulerClient is what the driver needs of the RM scheduler port (*AMRM implements it).
type SchedulerClient interface {
	Register(ctx context.Context, host string, rpcPort int32, trackingURL string) (*yarnpb.RegisterApplicationMasterResponseProto, error)
	UpdateBlacklist(additions, removals []string) error
	Allocate(ctx context.Context, r AllocateRequest) (*yarnpb.AllocateResponseProto, error)
	Finish(ctx context.Context, status yarnpb.FinalApplicationStatusProto, diagnostics, trackingURL string) error
	Close() error
}

// ContainerClient is what the driver needs of the NodeManagers (*NM implements it).
type ContainerClient interface {
	StartContainer(ctx context.Context, c *yarnpb.ContainerProto, launch *yarnpb.ContainerLaunchContextProto) error
	Close() error
}

// NodeLister lists the cluster's running nodes as NodeIds host:port (the driver needs the
// node universe to turn the AM's blocklist predicate into blacklist additions and
// removals). ClusterNodes adapts a *ClientRM.
type NodeLister interface {
	RunningNodes(ctx context.Context) ([]string, error)
}

// NodeIDFormat says how a YARN NodeId becomes a tide node id (the blocklist key, and the
// blacklist entry YARN matches against its scheduler node names).
type NodeIDFormat string

const (
	// NodeIDHost uses the host name, as Flink and Spark do: right for real clusters, where
	// the RM's node names are host names.
	NodeIDHost NodeIDFormat = "host"
	// NodeIDHostPort uses host:port; needed when several NodeManagers share a host
	// (MiniYARNCluster) and the RM runs with yarn.scheduler.include-port-in-node-name=true.
	NodeIDHostPort NodeIDFormat = "host-port"
)

// ParseNodeIDFormat checks a tide.yarn.node-id-format value.
func ParseNodeIDFormat(s string) (NodeIDFormat, error) {
	switch f := NodeIDFormat(s); f {
	case NodeIDHost, NodeIDHostPort:
		return f, nil
	case "":
		return NodeIDHost, nil
	}
	return "", fmt.Errorf("node id format %q: expected %q or %q", s, NodeIDHost, NodeIDHostPort)
}

// NodeID names node (a NodeId) in this format.
func (f NodeIDFormat) NodeID(node *yarnpb.NodeIdProto) core.NodeID {
	if f == NodeIDHostPort {
		return core.NodeID(NodeIDString(node))
	}
	return core.NodeID(node.GetHost())
}

// nodeOf maps a NodeId string host:port onto a tide node id.
func (f NodeIDFormat) nodeOf(hostPort string) core.NodeID {
	if f == NodeIDHostPort {
		return core.NodeID(hostPort)
	}
	for i := len(hostPort) - 1; i >= 0; i-- {
		if hostPort[i] == ':' {
			return core.NodeID(hostPort[:i])
		}
	}
	return core.NodeID(hostPort)
}

// AttemptRecords keeps what the next AM attempt needs in the application's staging
// directory and removes it at the end (*StagingStore implements it).
type AttemptRecords interface {
	// PublishAMAddress tells surviving TaskManagers where this attempt's AM listens.
	PublishAMAddress(ctx context.Context, addr string) error
	// RecordContainer notes which TaskManager runs in a container, before it starts.
	RecordContainer(ctx context.Context, container string, tm core.TaskManagerID) error
	// ContainerTaskManager names the TaskManager of a container of a previous attempt.
	ContainerTaskManager(ctx context.Context, container string) (core.TaskManagerID, error)
	// ContainerRecords lists every recorded container (id → TaskManager): at Start, the
	// containers of previous attempts that may have survived.
	ContainerRecords(ctx context.Context) (map[string]core.TaskManagerID, error)
	// ForgetContainer deletes the record of a container that completed.
	ForgetContainer(ctx context.Context, container string) error
	// Remove deletes the staging directory once the application has finished.
	Remove(ctx context.Context) error
	// Dir is the staging directory's URI.
	Dir() string
}

// LaunchFunc builds the launch context of the TaskManager id in a container on node (the
// tide node id the TaskManager must report).
type LaunchFunc func(id core.TaskManagerID, node core.NodeID) *yarnpb.ContainerLaunchContextProto

// DriverConfig configures a YARN driver.
type DriverConfig struct {
	// Scheduler, Containers and Nodes reach the cluster.
	Scheduler  SchedulerClient
	Containers ContainerClient
	Nodes      NodeLister

	// Host, RPCPort and TrackingURL are registered with the RM (the tracking URL is the
	// AM's REST address, which the RM's web proxy links to).
	Host        string
	RPCPort     int
	TrackingURL string

	// MemoryMB and VCores size every TaskManager container.
	MemoryMB int64
	VCores   int32
	// Launch builds a TaskManager's launch context.
	Launch LaunchFunc
	// NodeIDs is how NodeIds become node ids; default host.
	NodeIDs NodeIDFormat
	// AMNode is the NodeId (host:port) of the NodeManager running this AM ("" unknown):
	// YARN places AM attempts itself, so an attempt on a node the restored blocklist blocks
	// is logged.
	AMNode string

	// Records keeps containers across AM attempts (the submission must keep containers
	// across attempts) and removes the staging directory when the application succeeded
	// or was cancelled. Without it the containers of a previous attempt are released.
	Records AttemptRecords
	// RecoveryTimeout is how long an adopted container of a previous attempt may go
	// without its TaskManager registering before it is released and replaced; default 90 s.
	RecoveryTimeout time.Duration
	// AdoptionGrace and AdoptionGraceHeartbeats bound how long containers that Records
	// name but the RM did not report at registration stay expected: YARN may report kept
	// containers late, with an allocate. Until both the time (default 5 s) and that many
	// allocate heartbeats (default 3) have passed, RequestWorker hands expected containers
	// out instead of asking for new ones; an expected container is adopted when the RM
	// reports it or its TaskManager registers, and forgotten when the grace ends first.
	AdoptionGrace           time.Duration
	AdoptionGraceHeartbeats int

	// Heartbeat is the allocate interval while nothing is pending (Flink's
	// yarn.heartbeat.interval, default 5 s); FastHeartbeat is the interval while
	// containers are asked for or released (yarn.heartbeat.container-request-interval,
	// default 500 ms).
	Heartbeat, FastHeartbeat time.Duration
	// MaxLaunchFailures is how often one request may get a container whose TaskManager
	// fails before registering, before the request is reported failed; default 3.
	MaxLaunchFailures int
	// MaxHeartbeatFailures is how many allocate calls in a row may fail before the driver
	// reports a fatal error; default 30.
	MaxHeartbeatFailures int

	Logger *slog.Logger
}

func (c *DriverConfig) validate() error {
	var errs []error
	if c.Scheduler == nil {
		errs = append(errs, errors.New("no RM scheduler client"))
	}
	if c.Containers == nil {
		errs = append(errs, errors.New("no NodeManager client"))
	}
	if c.Launch == nil {
		errs = append(errs, errors.New("no TaskManager launch context builder"))
	}
	if c.MemoryMB <= 0 {
		errs = append(errs, fmt.Errorf("TaskManager container memory %d MB: expected more than 0", c.MemoryMB))
	}
	if c.VCores <= 0 {
		errs = append(errs, fmt.Errorf("TaskManager container vcores %d: expected more than 0", c.VCores))
	}
	if _, err := ParseNodeIDFormat(string(c.NodeIDs)); err != nil {
		errs = append(errs, err)
	}
	return errors.Join(errs...)
}

func (c *DriverConfig) withDefaults() {
	if c.NodeIDs == "" {
		c.NodeIDs = NodeIDHost
	}
	if c.Heartbeat <= 0 {
		c.Heartbeat = 5 * time.Second
	}
	if c.FastHeartbeat <= 0 {
		c.FastHeartbeat = 500 * time.Millisecond
	}
	if c.RecoveryTimeout <= 0 {
		c.RecoveryTimeout = 90 * time.Second
	}
	if c.AdoptionGrace <= 0 {
		c.AdoptionGrace = 5 * time.Second
	}
	if c.AdoptionGraceHeartbeats <= 0 {
		c.AdoptionGraceHeartbeats = 3
	}
	if c.MaxLaunchFailures <= 0 {
		c.MaxLaunchFailures = 3
	}
	if c.MaxHeartbeatFailures <= 0 {
		c.MaxHeartbeatFailures = 30
	}
	if c.Logger == nil {
		c.Logger = slog.Default()
	}
}

// ClusterNodes is a NodeLister over the RM's client protocol.
type ClusterNodes struct{ RM *ClientRM }

// Close closes the RM connection.
func (l ClusterNodes) Close() error { return l.RM.Close() }

// RunningNodes lists the NodeIds of the RUNNING nodes.
func (l ClusterNodes) RunningNodes(ctx context.Context) ([]string, error) {
	reports, err := l.RM.GetClusterNodes(ctx, yarnpb.NodeStateProto_NS_RUNNING)
	if err != nil {
		return nil, fmt.Errorf("listing the cluster's running nodes: %w", err)
	}
	out := make([]string, 0, len(reports))
	for _, r := range reports {
		out = append(out, NodeIDString(r.GetNodeId()))
	}
	return out, nil
}
