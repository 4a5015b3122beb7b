// Package jobgraph describes a streaming job as the scheduler sees it: vertices (operator
// chains) with parallelism bounds, maxParallelism and slot-sharing groups, and the edges
// between them. It also holds the key-group arithmetic that lets keyed state written at one
// parallelism be restored at any other parallelism up to maxParallelism.
package jobgraph

// JobType says whether a job is unbounded (STREAMING) or bounded (BATCH). The adaptive
// scheduler and reactive mode only run STREAMING jobs.
type JobType string

const (
	Streaming JobType = "STREAMING"
	Batch     JobType = "BATCH"
)

// EdgeKind says how records travel from the producer's subtasks to the consumer's.
type EdgeKind string

const (
	// Forward connects subtask i of the producer to subtask i of the consumer; both sides
	// must always run at the same parallelism.
	Forward EdgeKind = "FORWARD"
	// Hash routes a record by the key group of its key (keyBy).
	Hash EdgeKind = "HASH"
	// Rebalance spreads records round-robin over the consumer's subtasks.
	Rebalance EdgeKind = "REBALANCE"
)

// DefaultSlotSharingGroup is the group of vertices that name none.
const DefaultSlotSharingGroup = "default"

// Vertex is one job vertex. Parallelism is the configured parallelism; LowerBound and
// UpperBound (0: unset) bound what the adaptive scheduler may choose: unset, the lower
// bound is 1 and the upper bound is Parallelism (reactive mode: MaxParallelism).
// MaxParallelism 0 means "derive it from Parallelism" (see DefaultMaxParallelism).
type Vertex struct {
	ID               string
	Name             string
	Parallelism      int
	LowerBound       int
	UpperBound       int
	MaxParallelism   int
	SlotSharingGroup string
}

// Edge connects two vertices by ID.
type Edge struct {
	From, To string
	Kind     EdgeKind
}

// JobGraph is the whole job.
type JobGraph struct {
	Name     string
	Type     JobType
	Vertices []Vertex
	Edges    []Edge
}

// Group returns the vertex's slot-sharing group, DefaultSlotSharingGroup when unset.
func (v Vertex) Group() string {
	if v.SlotSharingGroup == "" {
		return DefaultSlotSharingGroup
	}
	return v.SlotSharingGroup
}

// EffectiveMaxParallelism is the user's MaxParallelism when set, else the default derived
// from Parallelism. It never changes while the job lives: key groups depend on it.
func (v Vertex) EffectiveMaxParallelism() int {
	if v.MaxParallelism > 0 {
		return v.MaxParallelism
	}
	return DefaultMaxParallelism(v.Parallelism)
}

// Bounds returns the parallelism range the scheduler may choose from. In reactive mode
// the range is [1, maxParallelism] whatever the user configured ("as parallel as possible").
func (v Vertex) Bounds(reactive bool) (lower, upper int) {
	maxP := v.EffectiveMaxParallelism()
	if reactive {
		return 1, maxP
	}
	lower, upper = v.LowerBound, v.UpperBound
	if lower <= 0 {
		lower = 1
	}
	if upper <= 0 {
		upper = v.Parallelism
	}
	return lower, upper
}

// Vertex returns the vertex with the given ID.
func (g *JobGraph) Vertex(id string) (Vertex, bool) {
	for _, v := range g.Vertices {
		if v.ID == id {
			return v, true
		}
	}
	return Vertex{}, false
}
