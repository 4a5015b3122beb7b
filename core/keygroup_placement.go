package core

import "github.com/tidestream/tide/core/keygroups"

// placeKeyGroups gives every vertex of a new attempt its key-group ranges: sticky to the
// TaskManagers of the last deployed attempt, balanced within KeyGroupBalanceFactor. The
// key groups that change TaskManager are added to the rescale in progress.
func (s *Scheduler) placeKeyGroups(vertices []VertexDeployment, d *deployment) {
	factor := s.opts.KeyGroupBalanceFactor
	if factor == 0 {
		factor = keygroups.DefaultBalanceFactor
	}
	next := make(map[VertexID]keygroups.Placed, len(vertices))
	moved := 0
	for i := range vertices {
		v := &vertices[i]
		if v.Parallelism == 0 {
			continue
		}
		tms := make([]string, v.Parallelism)
		off := d.offset[v.Vertex]
		for k := range tms {
			tms[k] = string(d.slots[d.taskSlot[off+k]].Slot.TaskManager)
		}
		prev := s.lastKeyGroups[v.Vertex]
		ranges, err := keygroups.Assign(v.MaxParallelism, tms, s.standbyPrevious(v.Vertex, prev), factor)
		if s.adoptionOpen() {
			// An adopted attempt keeps the ranges its subtasks run with.
			if adopted := s.adopt.adoptedKeyGroups(v.Vertex, v.Parallelism, v.MaxParallelism); adopted != nil {
				ranges, err = adopted, nil
			}
		}
		if err != nil {
			// Parallelism and factor were validated; a vertex that still fails keeps
			// Flink's split rather than stopping the deployment.
			s.log.Error("key-group placement; using the equal split", "vertex", v.Vertex, "err", err)
			ranges = keygroups.Default(v.MaxParallelism, v.Parallelism)
		}
		v.KeyGroups = ranges
		placed := keygroups.Placed{Ranges: ranges, TaskManagers: tms}
		moved += keygroups.Moved(v.MaxParallelism, prev, placed)
		next[v.Vertex] = placed
	}
	s.lastKeyGroups = next
	if s.history.current != nil {
		s.history.current.KeyGroupsMoved += moved
	}
}
