package am

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strconv"

	"github.com/tidestream/tide/api"
	"github.com/tidestream/tide/conf"
	"github.com/tidestream/tide/core"
	"github.com/tidestream/tide/core/blocklist"
)

// Blocklist is GET /blocklist (FLIP-224): every blocked node with its TaskManagers.
func (a *AM) Blocklist(ctx context.Context) (api.Blocklist, error) {
	var nodes []blocklist.BlockedNode
	var tms []core.TaskManagerInfo
	if err := a.inspect(ctx, func() { nodes, tms = a.sched.Blocklist(), a.sched.TaskManagers() }); err != nil {
		return nil, unavailable(err)
	}
	out := api.Blocklist{}
	for id, ni := range blocklist.NewListResponse(nodes, taskManagersOn(tms)) {
		out[id] = blockedNodeJSON(ni)
	}
	return out, nil
}

func blockedNodeJSON(ni blocklist.NodeInfo) api.BlockedNode {
	return api.BlockedNode{Action: string(ni.Action), StartTimestamp: ni.StartTimestamp, EndTimestamp: ni.EndTimestamp,
		Cause: ni.Cause, TaskManagers: ni.TaskManagers}
}

// taskManagersOn returns a lookup of the TaskManagers on a node.
func taskManagersOn(tms []core.TaskManagerInfo) func(blocklist.NodeID) []string {
	return func(n blocklist.NodeID) []string {
		var out []string
		for _, tm := range tms {
			if string(tm.Node) == n {
				out = append(out, string(tm.ID))
			}
		}
		return out
	}
}

// BlockNode applies a FLIP-224 add request for node id (PUT /blocklist/nodes/:id): block
// the node, or merge into its blocking with allowMerge. 201 created, 202 merged, 409
// already blocked without allowMerge, 400 listing every problem of the body.
func (a *AM) BlockNode(ctx context.Context, id string, body []byte, remote string) (int, api.BlockedNode, error) {
	if a.ConfigInForce()["blocklist.enabled"] == "false" {
		return 0, api.BlockedNode{}, statusError(http.StatusConflict, "The blocklist is disabled (blocklist.enabled: false): set it to true in flink-conf.yaml to block nodes")
	}
	rules := a.blocklistRules()
	req, err := blocklist.ParseAddRequest(id, body, a.clock.Now(), rules)
	var rerr *blocklist.RequestError
	if errors.As(err, &rerr) {
		return 0, api.BlockedNode{}, statusError(rerr.Status(), rerr.Problems...)
	} else if err != nil {
		return 0, api.BlockedNode{}, statusError(http.StatusBadRequest, err.Error())
	}
	var (
		status int
		node   blocklist.BlockedNode
		tms    []core.TaskManagerInfo
		aerr   error
		ver    uint64
	)
	err = a.mutate(ctx, func() { status, node, tms, aerr = a.blockNode(req, rules.Limits); ver = a.persistState() })
	if err != nil {
		return 0, api.BlockedNode{}, mutateError(err, a.blocklistTerminated())
	}
	if aerr != nil {
		return 0, api.BlockedNode{}, statusError(status, aerr.Error())
	}
	if err := a.blocklistDurable(ctx, ver, id); err != nil {
		return 0, api.BlockedNode{}, err
	}
	a.log.Info("node blocked over REST", "node", id, "action", node.Action, "status", status,
		"cause_bytes", len(node.Cause), "remote", remote)
	return status, blockedNodeJSON(blocklist.NewNodeInfo(node, taskManagersOn(tms)(id))), nil
}

// blocklistRules are the blocklist keys in force (reloaded live): the default action and the
// bounds on causes and entries.
func (a *AM) blocklistRules() blocklist.ParseOptions {
	c := a.ConfigInForce()
	num := func(key string) int {
		n, err := strconv.Atoi(c[key])
		if err != nil {
			return 0 // the bound's default
		}
		return n
	}
	return blocklist.ParseOptions{
		DefaultAction: blocklist.Action(c[conf.BlocklistDefaultAction.Key()]),
		Limits: blocklist.Limits{
			MaxCauseLength:       num(conf.BlocklistCauseMaxLength.Key()),
			MaxMergedCauseLength: num(conf.BlocklistCauseMaxMergedLength.Key()),
			MaxNodes:             num(conf.BlocklistMaxNodes.Key()),
		},
	}
}

// blockNode decides and applies an add request (loop goroutine).
func (a *AM) blockNode(req blocklist.AddRequest, lim blocklist.Limits) (int, blocklist.BlockedNode, []core.TaskManagerInfo, error) {
	all := a.sched.Blocklist()
	old, exists := findBlocked(all, req.Node.ID)
	status, apply := blocklist.AddStatus(exists, req.AllowMerge)
	if !apply {
		return status, old, nil, fmt.Errorf("node %s is already blocked (cause %s): set \"allowMerge\": true to merge this request into it",
			req.Node.ID, blocklist.CauseSummary(old.Cause))
	}
	if err := blocklist.CheckAdd(old, exists, len(all), req.Node, lim); err != nil {
		return http.StatusRequestEntityTooLarge, old, nil, err
	}
	if err := req.Node.Validate(a.clock.Now()); err != nil {
		return http.StatusBadRequest, old, nil, fmt.Errorf("block node %s: %w", req.Node.ID, err)
	}
	a.step(core.BlockNodes{Nodes: []blocklist.BlockedNode{req.Node}})
	node, ok := findBlocked(a.sched.Blocklist(), req.Node.ID)
	if !ok {
		return http.StatusBadRequest, req.Node, nil, fmt.Errorf("block node %s: the scheduler refused the blocking (see the AM log)", req.Node.ID)
	}
	return status, node, a.sched.TaskManagers(), nil
}

func findBlocked(nodes []blocklist.BlockedNode, id blocklist.NodeID) (blocklist.BlockedNode, bool) {
	for _, n := range nodes {
		if n.ID == id {
			return n, true
		}
	}
	return blocklist.BlockedNode{}, false
}

// UnblockNode ends the block of node id (DELETE /blocklist/node/:id); 404 when the node
// is not blocked.
func (a *AM) UnblockNode(ctx context.Context, id, remote string) error {
	var blocked bool
	var ver uint64
	err := a.mutate(ctx, func() {
		if _, blocked = findBlocked(a.sched.Blocklist(), id); blocked {
			a.step(core.UnblockNodes{Nodes: []core.NodeID{core.NodeID(id)}})
		}
		ver = a.persistState()
	})
	if err != nil {
		return mutateError(err, a.blocklistTerminated())
	}
	if blocked {
		if err := a.blocklistDurable(ctx, ver, id); err != nil {
			return err
		}
	}
	if status := blocklist.RemoveStatus(blocked); status != http.StatusOK {
		return statusErrorf(status, "Node %s is not blocked: GET /blocklist lists the blocked nodes", blocklist.Quote(id, 64))
	}
	a.log.Info("node unblocked over REST", "node", id, "remote", remote)
	return nil
}

// blocklistDurable lets a blocklist change be answered only once it is persisted beside
// the checkpoints (so it survives an AM failover); otherwise it is a 503.
func (a *AM) blocklistDurable(ctx context.Context, ver uint64, id string) error {
	if err := a.waitStateDurable(ctx, ver); err != nil {
		a.log.Warn("blocklist change not persisted", "node", id, "err", err)
		return statusErrorf(http.StatusServiceUnavailable,
			"The blocklist change of node %s applies to this AM attempt, but could not be persisted (it would not survive an AM failover; the AM keeps retrying): %v", id, err)
	}
	return nil
}

func (a *AM) blocklistTerminated() string {
	return fmt.Sprintf("Job %s has terminated: the blocklist can no longer change", a.cfg.JobID)
}
