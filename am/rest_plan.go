package am

import (
	"context"
	"fmt"

	"github.com/tidestream/tide/api"

	"github.com/tidestream/tide/core"
)

// JobPlan is GET /jobs/:jobid/plan: the job graph with the parallelism each vertex runs
// at now, regenerated on every request so that it follows rescales (FLINK-22243). Before
// the first deployment a vertex shows its upper bound.
func (a *AM) JobPlan(ctx context.Context) (api.JobPlan, error) {
	graph, err := a.jobGraph()
	if err != nil {
		return api.JobPlan{}, fmt.Errorf("job graph of %s: %w", a.cfg.JobName, err)
	}
	var par, maxP map[core.VertexID]int
	var req map[core.VertexID]core.Bounds
	if err := a.inspect(ctx, func() {
		par, maxP, req = a.sched.Parallelism(), a.sched.MaxParallelism(), a.sched.Requirements()
	}); err != nil {
		return api.JobPlan{}, unavailable(err)
	}
	p := api.Plan{JID: a.cfg.JobID, Name: a.cfg.JobName, Type: string(graph.Type), Nodes: []api.PlanNode{}}
	for _, v := range graph.Vertices {
		id := core.VertexID(v.ID)
		n, ok := par[id]
		if !ok {
			n = req[id].Upper
		}
		node := api.PlanNode{ID: v.ID, Parallelism: n, MaxParallelism: maxP[id], Operator: displayName(v.Name, v.ID),
			Description: displayName(v.Name, v.ID)}
		for _, e := range graph.Edges {
			if e.To == v.ID {
				node.Inputs = append(node.Inputs, api.PlanInput{Num: len(node.Inputs), ID: e.From, ShipStrategy: string(e.Kind), Exchange: "pipelined_bounded"})
			}
		}
		p.Nodes = append(p.Nodes, node)
	}
	return api.JobPlan{Plan: p}, nil
}
