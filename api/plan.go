package api

import (
	"context"
	"net/http"
)

// PlanInput is one input edge of a plan node.
type PlanInput struct {
	Num          int    `json:"num"`
	ID           string `json:"id"`
	ShipStrategy string `json:"ship_strategy"`
	Exchange     string `json:"exchange"`
}

// PlanNode is one vertex of the plan, at the parallelism it runs at now.
type PlanNode struct {
	ID             string      `json:"id"`
	Parallelism    int         `json:"parallelism"`
	MaxParallelism int         `json:"maxParallelism"`
	Operator       string      `json:"operator"`
	Description    string      `json:"description"`
	Inputs         []PlanInput `json:"inputs,omitempty"`
}

// Plan is the job graph of GET /jobs/:jobid/plan.
type Plan struct {
	JID   string     `json:"jid"`
	Name  string     `json:"name"`
	Type  string     `json:"type"`
	Nodes []PlanNode `json:"nodes"`
}

// JobPlan is GET /jobs/:jobid/plan.
type JobPlan struct {
	Plan Plan `json:"plan"`
}

// Plan returns the job graph with each vertex's current parallelism
// (GET /jobs/:jobid/plan).
func (c *Client) Plan(ctx context.Context, jobID string) (Plan, error) {
	var p JobPlan
	err := c.do(ctx, http.MethodGet, jobPath(jobID, "/plan"), nil, &p)
	return p.Plan, err
}
