package am

import (
	"errors"
	"fmt"
	"net/http"
	"strconv"

	"github.com/tidestream/tide/conf"
	"github.com/tidestream/tide/core"
	"github.com/tidestream/tide/core/blocklist"
)

// getBlocklist serves GET /blocklist (FLIP-224): every blocked node with its TaskManagers.
func (a *AM) getBlocklist(w http.ResponseWriter, r *http.Request) {
	var nodes []blocklist.BlockedNode
	var tms []core.TaskManagerInfo
	if err := a.inspect(r.Context(), func() { nodes, tms = a.sched.Blocklist(), a.sched.TaskManagers() }); err != nil {
		writeError(w, http.StatusServiceUnavailable, err.Error())
		return
	}
	writeJSON(w, http.StatusOK, blocklist.NewListResponse(nodes, taskManagersOn(tms)))
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

// putBlockedNode serves PUT /blocklist/nodes/:id (also POST, and /blocklist/:id): block a
// node, or merge into its blocking with allowMerge. 201 created, 202 merged, 409 already
// blocked without allowMerge, 400 listing every problem of the body.
func (a *AM) putBlockedNode(w http.ResponseWriter, r *http.Request) {
	body, ok := readBody(w, r)
	if !ok {
		return
	}
	if a.ConfigInForce()["blocklist.enabled"] == "false" {
		writeError(w, http.StatusConflict, "The blocklist is disabled (blocklist.enabled: false): set it to true in flink-conf.yaml to block nodes")
		return
	}
	id := r.PathValue("nodeid")
	rules := a.blocklistRules()
	req, err := blocklist.ParseAddRequest(id, body, a.clock.Now(), rules)
	var rerr *blocklist.RequestError
	if errors.As(err, &rerr) {
		writeErrors(w, rerr.Status(), rerr.Problems)
		return
	} else if err != nil {
		writeError(w, http.StatusBadRequest, err.Error())
		return
	}
	var (
		status int
		node   blocklist.BlockedNode
		tms    []core.TaskManagerInfo
		aerr   error
		ver    uint64
	)
	err = a.mutate(r.Context(), func() { status, node, tms, aerr = a.blockNode(req, rules.Limits); ver = a.persistState() })
	if writeMutateError(w, err, a.blocklistTerminated()) {
		return
	}
	if aerr != nil {
		writeError(w, status, aerr.Error())
		return
	}
	if !a.blocklistDurable(w, r, ver, id) {
		return
	}
	a.log.Info("node blocked over REST", "node", id, "action", node.Action, "status", status,
		"cause_bytes", len(node.Cause), "remote", r.RemoteAddr)
	writeJSON(w, status, blocklist.NewNodeInfo(node, taskManagersOn(tms)(id)))
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

// deleteBlockedNode serves DELETE /blocklist/node/:id (and /blocklist/nodes/:id,
// /blocklist/:id): 200 with an empty body, 404 when the node is not blocked.
func (a *AM) deleteBlockedNode(w http.ResponseWriter, r *http.Request) {
	if _, ok := readBody(w, r); !ok {
		return
	}
	id := r.PathValue("nodeid")
	var blocked bool
	var ver uint64
	err := a.mutate(r.Context(), func() {
		if _, blocked = findBlocked(a.sched.Blocklist(), id); blocked {
			a.step(core.UnblockNodes{Nodes: []core.NodeID{core.NodeID(id)}})
		}
		ver = a.persistState()
	})
	if writeMutateError(w, err, a.blocklistTerminated()) {
		return
	}
	if blocked && !a.blocklistDurable(w, r, ver, id) {
		return
	}
	if status := blocklist.RemoveStatus(blocked); status != http.StatusOK {
		writeError(w, status, fmt.Sprintf("Node %s is not blocked: GET /blocklist lists the blocked nodes", blocklist.Quote(id, 64)))
		return
	}
	a.log.Info("node unblocked over REST", "node", id, "remote", r.RemoteAddr)
	writeJSON(w, http.StatusOK, map[string]any{})
}

// blocklistDurable answers a blocklist change only once it is persisted beside the
// checkpoints (so it survives an AM failover); otherwise it answers 503 and false.
func (a *AM) blocklistDurable(w http.ResponseWriter, r *http.Request, ver uint64, id string) bool {
	if err := a.waitStateDurable(r.Context(), ver); err != nil {
		a.log.Warn("blocklist change not persisted", "node", id, "err", err)
		writeError(w, http.StatusServiceUnavailable, fmt.Sprintf(
			"The blocklist change of node %s applies to this AM attempt, but could not be persisted (it would not survive an AM failover; the AM keeps retrying): %v", id, err))
		return false
	}
	return true
}

func (a *AM) blocklistTerminated() string {
	return fmt.Sprintf("Job %s has terminated: the blocklist can no longer change", a.cfg.JobID)
}
