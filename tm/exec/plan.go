package exec

import (
	"fmt"

	"github.com/tidestream/tide/core/jobgraph"
	"github.com/tidestream/tide/core/keygroups"
	"github.com/tidestream/tide/stream"
)

// plan is a DeploySpec resolved against the job.
type plan struct {
	spec        DeploySpec
	vertices    map[string]*stream.Vertex
	parallelism map[string]VertexParallelism
	addr        map[string]map[int]string // vertex -> index -> data address
	owners      map[string][]int32        // vertex -> key group -> subtask index, when the AM placed them
}

func newPlan(job *stream.Job, spec DeploySpec) (*plan, error) {
	vs, err := job.Vertices()
	if err != nil {
		return nil, err
	}
	p := &plan{spec: spec, vertices: map[string]*stream.Vertex{}, parallelism: map[string]VertexParallelism{}, addr: map[string]map[int]string{}, owners: map[string][]int32{}}
	for _, v := range vs {
		p.vertices[v.ID] = v
	}
	for _, vp := range spec.Vertices {
		if _, ok := p.vertices[vp.Vertex]; !ok {
			return nil, fmt.Errorf("vertex %q is not part of job %q", vp.Vertex, job.Name())
		}
		if vp.Parallelism < 1 || vp.MaxParallelism < vp.Parallelism {
			return nil, fmt.Errorf("vertex %q: parallelism %d with maxParallelism %d, want 1 <= parallelism <= maxParallelism", vp.Vertex, vp.Parallelism, vp.MaxParallelism)
		}
		if a, err := vp.keyGroups(); err != nil {
			return nil, fmt.Errorf("vertex %q: %w", vp.Vertex, err)
		} else if a != nil {
			p.owners[vp.Vertex] = a.Owners(vp.MaxParallelism)
		}
		p.parallelism[vp.Vertex] = vp
	}
	for id := range p.vertices {
		if _, ok := p.parallelism[id]; !ok {
			return nil, fmt.Errorf("vertex %q of job %q has no parallelism in the deployment", id, job.Name())
		}
	}
	for _, l := range spec.Locations {
		if p.addr[l.Vertex] == nil {
			p.addr[l.Vertex] = map[int]string{}
		}
		p.addr[l.Vertex][l.Index] = l.DataAddress
	}
	for _, v := range vs {
		for _, out := range v.Outputs {
			if out.Kind == "FORWARD" && p.parallelism[v.ID].Parallelism != p.parallelism[out.To].Parallelism {
				return nil, fmt.Errorf("forward edge %s: parallelism %d and %d differ", stream.EdgeName(v.ID, out.To), p.parallelism[v.ID].Parallelism, p.parallelism[out.To].Parallelism)
			}
		}
	}
	for _, st := range spec.Subtasks {
		if _, ok := p.vertices[st.Vertex]; !ok {
			return nil, fmt.Errorf("subtask %s#%d: vertex is not part of job %q", st.Vertex, st.Index, job.Name())
		}
		if st.Index < 0 || st.Index >= p.parallelism[st.Vertex].Parallelism {
			return nil, fmt.Errorf("subtask %s#%d: index out of range 0..%d", st.Vertex, st.Index, p.parallelism[st.Vertex].Parallelism-1)
		}
	}
	return p, nil
}

// keyGroups returns the AM's key-group placement (nil when it sent none), checked to
// cover every key group once with one range per subtask.
func (vp VertexParallelism) keyGroups() (keygroups.Assignment, error) {
	if len(vp.KeyGroupStart) == 0 && len(vp.KeyGroupEnd) == 0 {
		return nil, nil
	}
	if len(vp.KeyGroupStart) != len(vp.KeyGroupEnd) {
		return nil, fmt.Errorf("key-group ranges: %d starts and %d ends, want one of each per subtask", len(vp.KeyGroupStart), len(vp.KeyGroupEnd))
	}
	a := make(keygroups.Assignment, len(vp.KeyGroupStart))
	for i := range a {
		a[i] = keygroups.Range{Start: vp.KeyGroupStart[i], End: vp.KeyGroupEnd[i]}
	}
	if err := a.Validate(vp.MaxParallelism, vp.Parallelism); err != nil {
		return nil, err
	}
	return a, nil
}

// keyGroupRange returns the key groups subtask index of vp owns.
func (vp VertexParallelism) keyGroupRange(index int) (start, end int) {
	if len(vp.KeyGroupStart) > 0 {
		return vp.KeyGroupStart[index], vp.KeyGroupEnd[index]
	}
	return jobgraph.KeyGroupRange(vp.MaxParallelism, vp.Parallelism, index)
}

// address returns where subtask index of vertex receives data.
func (p *plan) address(vertex string, index int) (string, error) {
	a, ok := p.addr[vertex][index]
	if !ok || a == "" {
		return "", fmt.Errorf("no location for subtask %s#%d in attempt %d", vertex, index, p.spec.Attempt)
	}
	return a, nil
}
