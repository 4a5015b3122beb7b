package api

import (
	"context"
	"net/http"
	"strconv"
)

// Bounds is a vertex's parallelism range in FLIP-291's body; -1 means the default bound
// (1 for LowerBound, maxParallelism for UpperBound).
type Bounds struct {
	LowerBound int `json:"lowerBound"`
	UpperBound int `json:"upperBound"`
}

func (b Bounds) String() string {
	side := func(n int) string {
		if n == -1 {
			return "default"
		}
		return strconv.Itoa(n)
	}
	return side(b.LowerBound) + ".." + side(b.UpperBound)
}

// VertexRequirements is one vertex of GET/PUT /jobs/:jobid/resource-requirements.
type VertexRequirements struct {
	Parallelism Bounds `json:"parallelism"`
}

// ResourceRequirements are the bounds of every vertex, by vertex id.
type ResourceRequirements map[string]VertexRequirements

// ResourceRequirements returns each vertex's parallelism bounds
// (GET /jobs/:jobid/resource-requirements).
func (c *Client) ResourceRequirements(ctx context.Context, jobID string) (ResourceRequirements, error) {
	var r ResourceRequirements
	err := c.do(ctx, http.MethodGet, jobPath(jobID, "/resource-requirements"), nil, &r)
	return r, err
}

// SetResourceRequirements replaces the bounds of every vertex
// (PUT /jobs/:jobid/resource-requirements); the scheduler then rescales within them as
// slots allow. It is refused (409) in reactive mode.
func (c *Client) SetResourceRequirements(ctx context.Context, jobID string, r ResourceRequirements) error {
	return c.do(ctx, http.MethodPut, jobPath(jobID, "/resource-requirements"), r, nil)
}
