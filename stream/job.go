package stream

import (
	"errors"
	"fmt"
	"strings"

	"github.com/tidestream/tide/core/jobgraph"
)

// Job is a streaming job under construction and, once built, the recipe every process
// (AM and TaskManagers) derives the same vertices, chains and operators from.
type Job struct {
	name           string
	parallelism    int
	maxParallelism int
	nodes          []*node
	err            error
	outputs        []Output

	chained  bool
	noChain  bool // pipeline.operator-chaining false: every operator is its own vertex
	vertices []*Vertex
	checks   []func(Submission) error
}

// node is one transformation.
type node struct {
	id          int
	uid         string
	name        string
	source      SplitSource
	watermarks  watermarkSpec
	newOp       func() Operator
	input       *node
	edge        jobgraph.EdgeKind
	keyHash     func(any) uint64
	keyHashT    any // keyHash as func(T) uint64 of the input's record type T
	codec       anyCodec
	parallelism int
	consumers   []*node
}

// NewJob starts a job with a default parallelism (used for the configured parallelism of
// every operator that sets none) and maxParallelism (0: derived from the parallelism).
func NewJob(name string, parallelism, maxParallelism int) *Job {
	j := &Job{name: name, parallelism: parallelism, maxParallelism: maxParallelism}
	if parallelism < 1 {
		j.err = fmt.Errorf("job %q: parallelism %d, want >= 1", name, parallelism)
	}
	if maxParallelism < 0 || maxParallelism > jobgraph.UpperBoundMaxParallelism {
		j.err = fmt.Errorf("job %q: maxParallelism %d, want 0 (default) or 1..%d", name, maxParallelism, jobgraph.UpperBoundMaxParallelism)
	}
	return j
}

// Name is the job's name.
func (j *Job) Name() string { return j.name }

// Outputs are the directories the job's file sinks write into, in the order they were added.
func (j *Job) Outputs() []Output { return append([]Output(nil), j.outputs...) }

func (j *Job) add(n *node) *node {
	if j.chained {
		j.fail(fmt.Errorf("job %q: operator %q added after the job was built", j.name, n.name))
	}
	n.id = len(j.nodes)
	if n.uid == "" {
		n.uid = slug(n.name)
	}
	for _, o := range j.nodes {
		if o.uid == n.uid {
			j.fail(fmt.Errorf("job %q: two operators named %q; operator names identify state and must be unique", j.name, n.name))
		}
	}
	if n.input != nil {
		n.input.consumers = append(n.input.consumers, n)
	}
	j.nodes = append(j.nodes, n)
	return n
}

func (j *Job) fail(err error) {
	if j.err == nil {
		j.err = err
	}
}

// slug makes an operator name usable in vertex ids and file names.
func slug(s string) string {
	var b strings.Builder
	for _, r := range s {
		switch {
		case r >= 'a' && r <= 'z', r >= 'A' && r <= 'Z', r >= '0' && r <= '9', r == '_', r == '.':
			b.WriteRune(r)
		default:
			b.WriteByte('_')
		}
	}
	return b.String()
}

// Vertex is one job vertex: a chain of operators run by one subtask.
type Vertex struct {
	// ID is stable across runs of the same job (state is stored under it).
	ID          string
	Name        string
	Parallelism int
	// Source is the split source at the head of the chain, or nil.
	Source SplitSource
	// Inputs are the vertices feeding this one.
	Inputs []VertexInput
	// Outputs are the vertices this one feeds.
	Outputs []VertexOutput

	nodes []*node
}

// VertexInput is one incoming edge.
type VertexInput struct {
	From string
	Kind jobgraph.EdgeKind
	// Codec decodes records from the producer.
	codec anyCodec
}

// VertexOutput is one outgoing edge.
type VertexOutput struct {
	To   string
	Kind jobgraph.EdgeKind
	// KeyHash hashes a record's key for HASH edges.
	KeyHash func(any) uint64
	codec   anyCodec
	// keyHashTyped is KeyHash as func(T) uint64 (T the record type), or nil.
	keyHashTyped any
}

// EdgeName names the edge from one vertex to another ("<from>-><to>"), as the data plane does.
func EdgeName(from, to string) string { return from + "->" + to }

// Decode decodes one record sent over this input.
func (in VertexInput) Decode(b []byte) (any, error) { return in.codec.decodeAny(b) }

// Append encodes one record for this output.
func (out VertexOutput) Append(dst []byte, v any) []byte { return out.codec.appendAny(dst, v) }

// DisableChaining runs every operator in its own vertex, with a channel to the next
// (pipeline.operator-chaining: false): for debugging and measuring what chaining saves.
// The AM and every TaskManager must agree; it must be called before the job is built.
func (j *Job) DisableChaining() {
	if j.chained {
		j.fail(fmt.Errorf("job %q: chaining disabled after the job was built", j.name))
		return
	}
	j.noChain = true
}

// Vertices chains the job's operators into vertices, in topological order: an operator
// joins its input's vertex when the edge between them is forward at equal parallelism and
// the input feeds nothing else (Flink's operator chaining), unless DisableChaining.
func (j *Job) Vertices() ([]*Vertex, error) {
	if j.err != nil {
		return nil, j.err
	}
	if j.chained {
		return j.vertices, nil
	}
	if len(j.nodes) == 0 {
		return nil, fmt.Errorf("job %q has no operators", j.name)
	}
	vertexOf := make(map[*node]*Vertex)
	var vertices []*Vertex
	for _, n := range j.nodes { // nodes are in topological order: inputs are added first
		if n.input != nil && !j.noChain && canChain(n.input, n) {
			v := vertexOf[n.input]
			v.nodes = append(v.nodes, n)
			v.Name += " -> " + n.name
			vertexOf[n] = v
			continue
		}
		v := &Vertex{ID: n.uid, Name: n.name, Parallelism: n.parallelism, Source: n.source, nodes: []*node{n}}
		vertexOf[n] = v
		vertices = append(vertices, v)
		if n.input != nil {
			from := vertexOf[n.input]
			v.Inputs = append(v.Inputs, VertexInput{From: from.ID, Kind: n.edge, codec: n.input.codec})
			from.Outputs = append(from.Outputs, VertexOutput{To: v.ID, Kind: n.edge, KeyHash: n.keyHash, codec: n.input.codec, keyHashTyped: n.keyHashT})
		}
	}
	j.vertices = vertices
	j.chained = true
	return vertices, nil
}

// canChain reports whether n runs in the same subtask as its input.
func canChain(in, n *node) bool {
	return n.edge == jobgraph.Forward && in.parallelism == n.parallelism && len(in.consumers) == 1 && n.source == nil
}

// Vertex returns the vertex with the given id.
func (j *Job) Vertex(id string) (*Vertex, error) {
	vs, err := j.Vertices()
	if err != nil {
		return nil, err
	}
	for _, v := range vs {
		if v.ID == id {
			return v, nil
		}
	}
	return nil, fmt.Errorf("job %q, vertex %q: %w", j.name, id, ErrNoVertex)
}

// Graph describes the job to the scheduler.
func (j *Job) Graph() (*jobgraph.JobGraph, error) {
	vs, err := j.Vertices()
	if err != nil {
		return nil, err
	}
	g := &jobgraph.JobGraph{Name: j.name, Type: jobgraph.Streaming}
	for _, v := range vs {
		g.Vertices = append(g.Vertices, jobgraph.Vertex{
			ID: v.ID, Name: v.Name, Parallelism: v.Parallelism, MaxParallelism: j.maxParallelism,
		})
		for _, out := range v.Outputs {
			g.Edges = append(g.Edges, jobgraph.Edge{From: v.ID, To: out.To, Kind: out.Kind})
		}
	}
	if err := g.Validate(); err != nil {
		return nil, fmt.Errorf("job %q: %w", j.name, err)
	}
	return g, nil
}

// SourceVertex pairs a source vertex with its split source (the AM runs its enumerator).
type SourceVertex struct {
	Vertex string
	Source SplitSource
}

// Sources lists the job's source vertices.
func (j *Job) Sources() []SourceVertex {
	vs, err := j.Vertices()
	if err != nil {
		return nil
	}
	var out []SourceVertex
	for _, v := range vs {
		if v.Source != nil {
			out = append(out, SourceVertex{Vertex: v.ID, Source: v.Source})
		}
	}
	return out
}

// ChainOperator is one operator of a vertex's chain.
type ChainOperator struct {
	ID       string
	Name     string
	Operator Operator
}

// NewChain instantiates the operators of the vertex (fresh instances each call), in order.
// The source at the head, if any, is not part of it: see Vertex.Source.
func (v *Vertex) NewChain() []ChainOperator {
	var ops []ChainOperator
	for _, n := range v.nodes {
		if n.newOp != nil {
			ops = append(ops, ChainOperator{ID: n.uid, Name: n.name, Operator: n.newOp()})
		}
	}
	return ops
}

// Watermarks returns how the source at the head of the vertex assigns timestamps and
// generates watermarks.
func (v *Vertex) Watermarks() WatermarkGenerator {
	if v.Source == nil {
		return nil
	}
	return v.nodes[0].watermarks.newGenerator()
}

// ErrNoVertex is returned when a vertex id is not part of the job.
var ErrNoVertex = errors.New("no such vertex")
