package am

import (
	"fmt"
	"net/http"

	"github.com/tidestream/tide/core"
)

type planInput struct {
	Num          int    `json:"num"`
	ID           string `json:"id"`
	ShipStrategy string `json:"ship_strategy"`
	Exchange     string `json:"exchange"`
}

type planNode struct {
	ID             string      `json:"id"`
	Parallelism    int         `json:"parallelism"`
	MaxParallelism int         `json:"maxParallelism"`
	Operator       string      `json:"operator"`
	Description    string      `json:"description"`
	Inputs         []planInput `json:"inputs,omitempty"`
}

type planBody struct {
	JID   string     `json:"jid"`
	Name  string     `json:"name"`
	Type  string     `json:"type"`
	Nodes []planNode `json:"nodes"`
}

// getPlan serves GET /jobs/:jobid/plan: the job graph with the parallelism each vertex
// runs at now, regenerated on every request so that it follows rescales (FLINK-22243).
// Before the first deployment a vertex shows its upper bound.
func (a *AM) getPlan(w http.ResponseWriter, r *http.Request) {
	graph, err := a.jobGraph()
	if err != nil {
		writeError(w, http.StatusInternalServerError, fmt.Sprintf("job graph of %s: %v", a.cfg.JobName, err))
		return
	}
	var par, maxP map[core.VertexID]int
	var req map[core.VertexID]core.Bounds
	if err := a.inspect(r.Context(), func() {
		par, maxP, req = a.sched.Parallelism(), a.sched.MaxParallelism(), a.sched.Requirements()
	}); err != nil {
		writeError(w, http.StatusServiceUnavailable, err.Error())
		return
	}
	p := planBody{JID: a.cfg.JobID, Name: a.cfg.JobName, Type: string(graph.Type), Nodes: []planNode{}}
	for _, v := range graph.Vertices {
		id := core.VertexID(v.ID)
		n, ok := par[id]
		if !ok {
			n = req[id].Upper
		}
		node := planNode{ID: v.ID, Parallelism: n, MaxParallelism: maxP[id], Operator: displayName(v.Name, v.ID),
			Description: displayName(v.Name, v.ID)}
		for _, e := range graph.Edges {
			if e.To == v.ID {
				node.Inputs = append(node.Inputs, planInput{Num: len(node.Inputs), ID: e.From, ShipStrategy: string(e.Kind), Exchange: "pipelined_bounded"})
			}
		}
		p.Nodes = append(p.Nodes, node)
	}
	writeJSON(w, http.StatusOK, map[string]planBody{"plan": p})
}
