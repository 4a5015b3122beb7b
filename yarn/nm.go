package yarn

import (
	"bytes"
	"context"
	"fmt"
	"log/slog"
	"sync"

	"github.com/hashicorp/go-multierror"
	"google.golang.org/protobuf/proto"

	"github.com/tidestream/tide/internal/hadoop/ipc"
	"github.com/tidestream/tide/yarn/yarnpb"
)

// NM is an ApplicationMaster's client of the NodeManagers' ContainerManagementProtocol. It
// keeps one connection per node, authenticated with that node's NMToken from the cache, and
// reconnects when a newer token arrives.
type NM struct {
	tokens *NMTokenCache
	log    *slog.Logger

	mu    sync.Mutex
	nodes map[string]*nmConn
}

type nmConn struct {
	c       *ipc.Client
	tokenID []byte // identifier of the token the client was made with
}

// NewNM returns an NM client reading NMTokens from tokens.
func NewNM(tokens *NMTokenCache, log *slog.Logger) *NM {
	if log == nil {
		log = slog.Default()
	}
	return &NM{tokens: tokens, log: log, nodes: map[string]*nmConn{}}
}

// client returns the connection to node (host:port), made with its current NMToken.
func (n *NM) client(node string) (*ipc.Client, error) {
	tok, ok := n.tokens.Get(node)
	if !ok {
		return nil, fmt.Errorf("NodeManager %s: no NMToken (the RM sends it with the first container on the node)", node)
	}
	n.mu.Lock()
	defer n.mu.Unlock()
	if nc, ok := n.nodes[node]; ok {
		if bytes.Equal(nc.tokenID, tok.Identifier) {
			return nc.c, nil
		}
		nc.c.SetToken(tok)
		nc.tokenID = tok.Identifier
		return nc.c, nil
	}
	c, err := ipc.New(ipc.Config{Addr: node, Protocol: ProtocolContainerManagement, Token: &tok, Logger: n.log})
	if err != nil {
		return nil, fmt.Errorf("NodeManager %s: %w", node, err)
	}
	n.nodes[node] = &nmConn{c: c, tokenID: tok.Identifier}
	return c, nil
}

func (n *NM) call(ctx context.Context, node, method string, req, resp proto.Message) error {
	c, err := n.client(node)
	if err != nil {
		return err
	}
	if err := c.Call(ctx, method, req, resp); err != nil {
		return fmt.Errorf("NodeManager %s %s: %w", node, method, err)
	}
	return nil
}

// StartContainer launches launch in the allocated container c on its node. A refusal by the
// NodeManager comes back as a *ContainerError.
func (n *NM) StartContainer(ctx context.Context, c *yarnpb.ContainerProto, launch *yarnpb.ContainerLaunchContextProto) error {
	node := NodeIDString(c.GetNodeId())
	resp := &yarnpb.StartContainersResponseProto{}
	err := n.call(ctx, node, "startContainers", &yarnpb.StartContainersRequestProto{
		StartContainerRequest: []*yarnpb.StartContainerRequestProto{{ContainerLaunchContext: launch, ContainerToken: c.GetContainerToken()}},
	}, resp)
	if err != nil {
		return fmt.Errorf("starting container %s: %w", ContainerIDString(c.GetId()), err)
	}
	return failedRequests(node, resp.GetFailedRequests(), c.GetId(), resp.GetSucceededRequests())
}

// StopContainer stops container id on node.
func (n *NM) StopContainer(ctx context.Context, node string, id *yarnpb.ContainerIdProto) error {
	resp := &yarnpb.StopContainersResponseProto{}
	if err := n.call(ctx, node, "stopContainers", &yarnpb.StopContainersRequestProto{ContainerId: []*yarnpb.ContainerIdProto{id}}, resp); err != nil {
		return fmt.Errorf("stopping container %s: %w", ContainerIDString(id), err)
	}
	return failedRequests(node, resp.GetFailedRequests(), id, resp.GetSucceededRequests())
}

// ContainerStatus asks node for the status of container id.
func (n *NM) ContainerStatus(ctx context.Context, node string, id *yarnpb.ContainerIdProto) (*yarnpb.ContainerStatusProto, error) {
	resp := &yarnpb.GetContainerStatusesResponseProto{}
	if err := n.call(ctx, node, "getContainerStatuses", &yarnpb.GetContainerStatusesRequestProto{ContainerId: []*yarnpb.ContainerIdProto{id}}, resp); err != nil {
		return nil, fmt.Errorf("status of container %s: %w", ContainerIDString(id), err)
	}
	if err := failedRequests(node, resp.GetFailedRequests(), id, nil); err != nil {
		return nil, err
	}
	for _, s := range resp.GetStatus() {
		if proto.Equal(s.GetContainerId(), id) || ContainerIDString(s.GetContainerId()) == ContainerIDString(id) {
			return s, nil
		}
	}
	return nil, fmt.Errorf("status of container %s: NodeManager %s answered without it", ContainerIDString(id), node)
}

// failedRequests turns the per-container failures of a NodeManager reply into an error; a
// reply that neither succeeded nor failed the container is an error too.
func failedRequests(node string, failed []*yarnpb.ContainerExceptionMapProto, id *yarnpb.ContainerIdProto, succeeded []*yarnpb.ContainerIdProto) error {
	want := ContainerIDString(id)
	for _, f := range failed {
		if ContainerIDString(f.GetContainerId()) == want {
			ex := f.GetException()
			return &ContainerError{ContainerID: want, Node: node, Class: ex.GetClassName(), Message: ex.GetMessage()}
		}
	}
	if succeeded == nil {
		return nil
	}
	for _, s := range succeeded {
		if ContainerIDString(s) == want {
			return nil
		}
	}
	return fmt.Errorf("container %s: NodeManager %s reported neither success nor failure", want, node)
}

// Close closes every NodeManager connection.
func (n *NM) Close() error {
	n.mu.Lock()
	nodes := n.nodes
	n.nodes = map[string]*nmConn{}
	n.mu.Unlock()
	var errs *multierror.Error
	for node, nc := range nodes {
		if err := nc.c.Close(); err != nil {
			errs = multierror.Append(errs, fmt.Errorf("closing NodeManager %s: %w", node, err))
		}
	}
	return errs.ErrorOrNil()
}
