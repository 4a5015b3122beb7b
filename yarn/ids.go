package yarn

import (
	"fmt"
	"strconv"
	"strings"

	"google.golang.org/protobuf/proto"

	"github.com/tidestream/tide/yarn/yarnpb"
)

// YARN id strings, formatted as Java's ApplicationId, ApplicationAttemptId, ContainerId and
// NodeId toString do: application_<clusterTs>_<id%04d>,
// appattempt_<clusterTs>_<id%04d>_<attempt%06d>,
// container_[e<epoch>_]<clusterTs>_<app%04d>_<attempt%02d>_<seq%06d>, host:port.

// ApplicationIDString formats an application id.
func ApplicationIDString(id *yarnpb.ApplicationIdProto) string {
	return fmt.Sprintf("application_%d_%04d", id.GetClusterTimestamp(), id.GetId())
}

// AttemptIDString formats an application attempt id.
func AttemptIDString(id *yarnpb.ApplicationAttemptIdProto) string {
	a := id.GetApplicationId()
	return fmt.Sprintf("appattempt_%d_%04d_%06d", a.GetClusterTimestamp(), a.GetId(), id.GetAttemptId())
}

// ContainerIDString formats a container id; the epoch lives in bits 40 and up of the id.
func ContainerIDString(id *yarnpb.ContainerIdProto) string {
	att := id.GetAppAttemptId()
	app := att.GetApplicationId()
	if app == nil {
		app = id.GetAppId()
	}
	epoch := id.GetId() >> 40
	seq := id.GetId() & (1<<40 - 1)
	var b strings.Builder
	b.WriteString("container_")
	if epoch > 0 {
		fmt.Fprintf(&b, "e%02d_", epoch)
	}
	fmt.Fprintf(&b, "%d_%04d_%02d_%06d", app.GetClusterTimestamp(), app.GetId(), att.GetAttemptId(), seq)
	return b.String()
}

// NodeIDString formats a NodeId as host:port, the key of NMTokens and of host:port blacklists.
func NodeIDString(n *yarnpb.NodeIdProto) string {
	return n.GetHost() + ":" + strconv.Itoa(int(n.GetPort()))
}

// ParseApplicationID parses application_<clusterTs>_<id>.
func ParseApplicationID(s string) (*yarnpb.ApplicationIdProto, error) {
	parts := strings.Split(s, "_")
	if len(parts) != 3 || parts[0] != "application" {
		return nil, fmt.Errorf("application id %q: want application_<clusterTimestamp>_<id>", s)
	}
	ts, id, err := parseTsAndID(parts[1], parts[2])
	if err != nil {
		return nil, fmt.Errorf("application id %q: %w", s, err)
	}
	return &yarnpb.ApplicationIdProto{ClusterTimestamp: proto.Int64(ts), Id: proto.Int32(id)}, nil
}

// ParseContainerID parses a container id string, e.g. the CONTAINER_ID a NodeManager puts in
// every container's environment, from which an AM learns its own attempt id.
func ParseContainerID(s string) (*yarnpb.ContainerIdProto, error) {
	parts := strings.Split(s, "_")
	if len(parts) < 5 || parts[0] != "container" {
		return nil, fmt.Errorf("container id %q: want container_[e<epoch>_]<clusterTimestamp>_<app>_<attempt>_<container>", s)
	}
	var epoch int64
	rest := parts[1:]
	if strings.HasPrefix(rest[0], "e") {
		e, err := strconv.ParseInt(rest[0][1:], 10, 32)
		if err != nil || e < 0 {
			return nil, fmt.Errorf("container id %q: bad epoch %q", s, rest[0])
		}
		epoch = e
		rest = rest[1:]
	}
	if len(rest) != 4 {
		return nil, fmt.Errorf("container id %q: want 4 numeric fields after the prefix, got %d", s, len(rest))
	}
	ts, appID, err := parseTsAndID(rest[0], rest[1])
	if err != nil {
		return nil, fmt.Errorf("container id %q: %w", s, err)
	}
	attempt, err := strconv.ParseInt(rest[2], 10, 32)
	if err != nil || attempt < 0 {
		return nil, fmt.Errorf("container id %q: bad attempt %q", s, rest[2])
	}
	seq, err := strconv.ParseInt(rest[3], 10, 64)
	if err != nil || seq < 0 || seq >= 1<<40 {
		return nil, fmt.Errorf("container id %q: bad container number %q", s, rest[3])
	}
	app := &yarnpb.ApplicationIdProto{ClusterTimestamp: proto.Int64(ts), Id: proto.Int32(appID)}
	return &yarnpb.ContainerIdProto{
		AppId:        app,
		AppAttemptId: &yarnpb.ApplicationAttemptIdProto{ApplicationId: app, AttemptId: proto.Int32(int32(attempt))},
		Id:           proto.Int64(epoch<<40 | seq),
	}, nil
}

func parseTsAndID(tsStr, idStr string) (int64, int32, error) {
	ts, err := strconv.ParseInt(tsStr, 10, 64)
	if err != nil || ts < 0 {
		return 0, 0, fmt.Errorf("bad cluster timestamp %q", tsStr)
	}
	id, err := strconv.ParseInt(idStr, 10, 32)
	if err != nil || id < 0 {
		return 0, 0, fmt.Errorf("bad id %q", idStr)
	}
	return ts, int32(id), nil
}
