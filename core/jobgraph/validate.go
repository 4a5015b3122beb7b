package jobgraph

import (
	"errors"
	"fmt"
	"slices"
)

// ErrInvalid is wrapped by every validation error.
var ErrInvalid = errors.New("invalid job graph")

// Validate checks the graph and returns every rule broken, each naming the vertex or edge
// and the rule, joined into one error that wraps ErrInvalid.
func (g *JobGraph) Validate() error {
	var errs []error
	bad := func(format string, args ...any) {
		errs = append(errs, fmt.Errorf("%w: "+format, append([]any{ErrInvalid}, args...)...))
	}
	if g.Type != Streaming && g.Type != Batch {
		bad("job %q: type %q, want %s or %s", g.Name, g.Type, Streaming, Batch)
	}
	if len(g.Vertices) == 0 {
		bad("job %q: no vertices", g.Name)
	}
	byID := make(map[string]Vertex, len(g.Vertices))
	for _, v := range g.Vertices {
		if v.ID == "" {
			bad("vertex %q: empty id", v.Name)
			continue
		}
		if _, dup := byID[v.ID]; dup {
			bad("vertex %q: duplicate id", v.ID)
			continue
		}
		byID[v.ID] = v
		errs = append(errs, validateVertex(v)...)
	}
	for _, e := range g.Edges {
		from, okFrom := byID[e.From]
		to, okTo := byID[e.To]
		switch {
		case !okFrom:
			bad("edge %s->%s: unknown source vertex %q", e.From, e.To, e.From)
		case !okTo:
			bad("edge %s->%s: unknown target vertex %q", e.From, e.To, e.To)
		case e.From == e.To:
			bad("edge %s->%s: vertex %q connects to itself", e.From, e.To, e.From)
		}
		switch e.Kind {
		case Forward, Hash, Rebalance:
		default:
			bad("edge %s->%s: kind %q, want %s, %s or %s", e.From, e.To, e.Kind, Forward, Hash, Rebalance)
		}
		if okFrom && okTo && e.Kind == Forward {
			fl, fu := from.Bounds(false)
			tl, tu := to.Bounds(false)
			if from.Parallelism != to.Parallelism || fl != tl || fu != tu || from.Group() != to.Group() {
				bad("edge %s->%s: forward edge between vertex %q (parallelism %d, bounds [%d,%d], group %q) and vertex %q (parallelism %d, bounds [%d,%d], group %q): want equal parallelism, bounds and slot-sharing group",
					e.From, e.To, from.ID, from.Parallelism, fl, fu, from.Group(), to.ID, to.Parallelism, tl, tu, to.Group())
			}
		}
	}
	if cycle := findCycle(g.Vertices, g.Edges, byID); cycle != nil {
		bad("vertex %q: on a cycle %v", cycle[0], cycle)
	}
	return errors.Join(errs...)
}

func validateVertex(v Vertex) []error {
	var errs []error
	bad := func(format string, args ...any) {
		errs = append(errs, fmt.Errorf("%w: vertex %q: "+format, append([]any{ErrInvalid, v.ID}, args...)...))
	}
	if v.Parallelism < 1 {
		bad("parallelism %d, want >= 1", v.Parallelism)
	}
	if v.MaxParallelism < 0 || v.MaxParallelism > UpperBoundMaxParallelism {
		bad("maxParallelism %d, want 0 (derive) or 1..%d", v.MaxParallelism, UpperBoundMaxParallelism)
		return errs
	}
	maxP := v.EffectiveMaxParallelism()
	if v.Parallelism > maxP {
		bad("parallelism %d above maxParallelism %d", v.Parallelism, maxP)
	}
	if v.LowerBound < 0 || v.UpperBound < 0 {
		bad("bounds [%d,%d], want >= 0 (0: default)", v.LowerBound, v.UpperBound)
		return errs
	}
	lower, upper := v.Bounds(false)
	if lower > upper {
		bad("lower bound %d above upper bound %d", lower, upper)
	}
	if upper > maxP {
		bad("upper bound %d above maxParallelism %d", upper, maxP)
	}
	return errs
}

// findCycle returns the vertex IDs of one cycle (first vertex repeated last), or nil.
func findCycle(vertices []Vertex, edges []Edge, byID map[string]Vertex) []string {
	out := make(map[string][]string, len(vertices))
	for _, e := range edges {
		if _, ok := byID[e.From]; !ok {
			continue
		}
		if _, ok := byID[e.To]; !ok || e.From == e.To {
			continue
		}
		out[e.From] = append(out[e.From], e.To)
	}
	const (
		white = iota
		grey
		black
	)
	color := make(map[string]int, len(vertices))
	var stack []string
	var visit func(id string) []string
	visit = func(id string) []string {
		color[id] = grey
		stack = append(stack, id)
		for _, next := range out[id] {
			switch color[next] {
			case grey:
				i := slices.Index(stack, next)
				return append(slices.Clone(stack[i:]), next)
			case white:
				if c := visit(next); c != nil {
					return c
				}
			}
		}
		stack = stack[:len(stack)-1]
		color[id] = black
		return nil
	}
	for _, v := range vertices {
		if color[v.ID] == white {
			if c := visit(v.ID); c != nil {
				return c
			}
		}
	}
	return nil
}
