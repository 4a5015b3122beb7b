package core

import (
	"cmp"
	"slices"

	"github.com/tidestream/tide/core/keygroups"
)

// standbyRound is the standby copies (num.standby.replicas) of one deployed attempt: for
// every key-group range, copies on other TaskManagers that follow each completed
// checkpoint, so that the range's new owner after a TaskManager loss restores locally.
type standbyRound struct {
	id      int
	copies  []warmCopy
	applied CheckpointID // the newest checkpoint sent to the copies
}

func (r *standbyRound) tasks() []WarmupTask {
	out := make([]WarmupTask, len(r.copies))
	for i, c := range r.copies {
		out[i] = c.task
	}
	return out
}

func (r *standbyRound) report(ev WarmupReported) {
	for i := range r.copies {
		c := &r.copies[i]
		if c.task.TaskManager == ev.TaskManager && c.task.Vertex == ev.Vertex && c.task.KeyGroups == ev.KeyGroups {
			c.bytes = max(c.bytes, ev.Bytes)
			if ev.Error != "" {
				c.failed = ev.Error
			} else {
				c.failed = ""
				c.applied = max(c.applied, ev.Checkpoint)
			}
		}
	}
}

// standbyHolder returns a TaskManager still registered whose standby copy of r (of
// vertex v) is current, or "". Current means within one checkpoint of the newest
// completed one, as for a warm-up: a restore finds the older checkpoint's files
// locally and downloads only what the newest added (the copy may be following it).
func (s *Scheduler) standbyHolder(v VertexID, r keygroups.Range) string {
	if s.standby == nil {
		return ""
	}
	for _, c := range s.standby.copies {
		if c.task.Vertex == v && c.task.KeyGroups == r && c.failed == "" && c.applied > 0 && c.applied+1 >= s.latestCheckpoint &&
			s.pool.Has(string(c.task.TaskManager)) {
			return string(c.task.TaskManager)
		}
	}
	return ""
}

// standbyPrevious is the placement a new attempt sticks to: the last one, with every range
// of a TaskManager that is gone credited to a TaskManager holding its standby copy, so
// the new owner is preferably where the copy is.
func (s *Scheduler) standbyPrevious(v VertexID, prev keygroups.Placed) keygroups.Placed {
	if s.standby == nil || len(prev.Ranges) == 0 {
		return prev
	}
	var out keygroups.Placed
	for i, tm := range prev.TaskManagers {
		if s.pool.Has(tm) {
			continue
		}
		if h := s.standbyHolder(v, prev.Ranges[i]); h != "" {
			if out.TaskManagers == nil {
				out = keygroups.Placed{Ranges: prev.Ranges, TaskManagers: slices.Clone(prev.TaskManagers)}
			}
			out.TaskManagers[i] = h
		}
	}
	if out.TaskManagers == nil {
		return prev
	}
	return out
}

// planStandbys places num.standby.replicas copies of every range of the deployed attempt
// on other TaskManagers: never on the range's own TaskManager nor on a blocked node, other
// nodes before the owner's node, then the owners of the neighbouring ranges, then the
// TaskManager with the fewest copies so far, then by id. A plan that differs from the
// current standby round replaces it (after a deploy, or when TaskManagers came or went).
func (s *Scheduler) planStandbys() {
	n := s.opts.NumStandbyReplicas
	var tasks []WarmupTask
	if n > 0 && s.dep != nil {
		tasks = s.standbyTasks(n)
	}
	if s.standby != nil && slices.Equal(s.standby.tasks(), tasks) {
		return
	}
	if s.standby != nil {
		s.emit(StopWarmup{Round: s.standby.id, Reason: "standby copies replanned"})
		s.standby = nil
	}
	if len(tasks) == 0 {
		return
	}
	r := &standbyRound{id: s.nextWarmupRound(), applied: s.latestCheckpoint}
	for _, t := range tasks {
		r.copies = append(r.copies, warmCopy{task: t})
	}
	s.standby = r
	s.log.Info("standby copies planned", "round", r.id, "copies", len(r.copies), "replicas", n)
	s.emit(WarmUp{Round: r.id, Kind: WarmupStandby, Checkpoint: s.latestCheckpoint, Tasks: tasks})
}

func (s *Scheduler) standbyTasks(n int) []WarmupTask {
	type cand struct{ id, node string }
	var cands []cand
	for _, info := range s.pool.Infos() {
		if !info.Blocked {
			cands = append(cands, cand{info.ID, info.Node})
		}
	}
	load := map[string]int{}
	var out []WarmupTask
	for _, v := range s.vertices {
		placed := s.lastKeyGroups[v.id]
		for i, rg := range placed.Ranges {
			owner := placed.TaskManagers[i]
			ownerNode, _ := s.pool.Node(owner)
			// A neighbour (the owner of the range before or after this one) that takes the
			// range over after a loss keeps one contiguous range: it restores both from local
			// files, where any other holder gets a range the plan cannot give it whole.
			neighbour := func(id string) bool {
				return (i > 0 && placed.TaskManagers[i-1] == id) || (i+1 < len(placed.TaskManagers) && placed.TaskManagers[i+1] == id)
			}
			pick := slices.DeleteFunc(slices.Clone(cands), func(c cand) bool { return c.id == owner })
			slices.SortStableFunc(pick, func(a, b cand) int {
				return cmp.Or(cmp.Compare(b2i(a.node == ownerNode), b2i(b.node == ownerNode)),
					cmp.Compare(b2i(!neighbour(a.id)), b2i(!neighbour(b.id))),
					cmp.Compare(load[a.id], load[b.id]), cmp.Compare(a.id, b.id))
			})
			for _, c := range pick[:min(n, len(pick))] {
				load[c.id]++
				out = append(out, WarmupTask{Vertex: v.id, Subtask: i, MaxParallelism: v.maxP, KeyGroups: rg, TaskManager: TaskManagerID(c.id)})
			}
		}
	}
	return out
}

// standbyCheckpoint sends a newer completed checkpoint to the standby copies.
func (s *Scheduler) standbyCheckpoint() {
	if r := s.standby; r != nil && s.latestCheckpoint > r.applied {
		r.applied = s.latestCheckpoint
		s.emit(WarmUp{Round: r.id, Kind: WarmupStandby, Checkpoint: s.latestCheckpoint, Tasks: r.tasks()})
	}
}

// standbyLag is how many checkpoints the most lagging standby copy is behind the newest
// completed one (0 without standbys); a failed copy counts as lagging by the whole history.
func (s *Scheduler) standbyLag() int {
	if s.standby == nil {
		return 0
	}
	lag := 0
	for _, c := range s.standby.copies {
		lag = max(lag, int(s.latestCheckpoint-c.applied))
	}
	return lag
}

func b2i(b bool) int {
	if b {
		return 1
	}
	return 0
}
