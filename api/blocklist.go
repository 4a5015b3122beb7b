package api

import (
	"context"
	"net/http"
	"net/url"
)

// Blocklist actions (FLIP-224).
const (
	ActionMarkBlocked            = "MARK_BLOCKED"
	ActionMarkBlockedAndEvacuate = "MARK_BLOCKED_AND_EVACUATE_TASKS"
)

// BlockedNode is one node of GET /blocklist and the answer to blocking one. Timestamps
// are Unix milliseconds, sent as strings as FLIP-224 spells them; an EndTimestamp of
// math.MaxInt64 means the block never ends by itself.
type BlockedNode struct {
	Action         string   `json:"action"`
	StartTimestamp int64    `json:"startTimestamp,string"`
	EndTimestamp   int64    `json:"endTimestamp,string"`
	Cause          string   `json:"cause"`
	TaskManagers   []string `json:"taskManagers"`
}

// Blocklist is GET /blocklist: the blocked nodes by node id.
type Blocklist map[string]BlockedNode

// BlockNodeRequest is the body of PUT /blocklist/nodes/:id. An empty Action means the AM's
// blocklist.default-action; a zero EndTimestamp means the AM's blocklist.default-timeout
// (math.MaxInt64 blocks for good); AllowMerge merges into an existing block of the node
// instead of answering 409.
type BlockNodeRequest struct {
	Action       string `json:"action,omitempty"`
	EndTimestamp int64  `json:"endTimestamp,omitempty,string"`
	Cause        string `json:"cause"`
	AllowMerge   bool   `json:"allowMerge,omitempty,string"`
}

// Blocklist returns the blocked nodes (GET /blocklist).
func (c *Client) Blocklist(ctx context.Context) (Blocklist, error) {
	var b Blocklist
	err := c.do(ctx, http.MethodGet, "/blocklist", nil, &b)
	return b, err
}

// BlockNode blocks node (PUT /blocklist/nodes/:id) and returns the block in force.
func (c *Client) BlockNode(ctx context.Context, node string, req BlockNodeRequest) (BlockedNode, error) {
	var n BlockedNode
	err := c.do(ctx, http.MethodPut, "/blocklist/nodes/"+url.PathEscape(node), req, &n)
	return n, err
}

// UnblockNode ends the block of node (DELETE /blocklist/node/:id); a node that is not
// blocked is a 404 *StatusError.
func (c *Client) UnblockNode(ctx context.Context, node string) error {
	return c.do(ctx, http.MethodDelete, "/blocklist/node/"+url.PathEscape(node), nil, nil)
}
