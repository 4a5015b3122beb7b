package yarn

import (
	"context"
	"maps"
	"slices"
	"time"

	"github.com/tidestream/tide/core"
	"github.com/tidestream/tide/drivers"
	"github.com/tidestream/tide/yarn/yarnpb"
)

// previousContainer is a container YARN kept from a previous attempt, with the
// TaskManager the records name for it ("" when unknown).
type previousContainer struct {
	c  *yarnpb.ContainerProto
	tm core.TaskManagerID
}

// namePrevious looks up the TaskManager of every container of a previous attempt (no
// lock held: the records live on HDFS).
func (d *Driver) namePrevious(ctx context.Context, cs []*yarnpb.ContainerProto) []previousContainer {
	out := make([]previousContainer, 0, len(cs))
	for _, c := range cs {
		p := previousContainer{c: c}
		if d.cfg.Records != nil {
			cid := ContainerIDString(c.GetId())
			tm, err := d.cfg.Records.ContainerTaskManager(ctx, cid)
			if err != nil {
				d.log.Warn("cannot name the TaskManager of a container of a previous attempt", "container", cid, "err", err)
			}
			p.tm = tm
		}
		out = append(out, p)
	}
	return out
}

// adopt takes in the named containers of a previous attempt on unblocked nodes as
// launched workers and releases the others (mu held). It returns the adopted workers.
func (d *Driver) adopt(prev []previousContainer) []drivers.Worker {
	var out []drivers.Worker
	now := time.Now()
	for _, p := range prev {
		cid := ContainerIDString(p.c.GetId())
		if _, dup := d.workers[p.tm]; p.tm == "" || dup || d.abandoned[p.tm] {
			d.log.Info("releasing a container of a previous attempt", "container", cid, "taskmanager", p.tm)
			d.releases = append(d.releases, p.c.GetId())
			continue
		}
		node := d.cfg.NodeIDs.NodeID(p.c.GetNodeId())
		d.nodes[NodeIDString(p.c.GetNodeId())] = true
		if d.blocked(node) {
			// The blocklist restored from the previous attempt keeps its TaskManager out:
			// admitting it would fail, and its container's end would count as a failed launch.
			d.log.Info("releasing a container of a previous attempt on a blocked node", "container", cid, "taskmanager", p.tm, "node", node)
			d.releases = append(d.releases, p.c.GetId())
			continue
		}
		w := &worker{id: p.tm, state: stateLaunched, container: p.c, node: node, adopted: true, adoptedAt: now}
		d.workers[w.id] = w
		d.containers[cid] = w
		d.unclaimed = append(d.unclaimed, w.id)
		out = append(out, drivers.Worker{ID: w.id, Node: node})
		d.log.Info("adopted a container of a previous attempt; waiting for its TaskManager to register",
			"taskmanager", w.id, "container", cid, "node", node, "timeout", d.cfg.RecoveryTimeout)
	}
	return out
}

// expireAdopted releases adopted containers whose TaskManager has not registered within
// RecoveryTimeout; a request counting on one gets a new container (mu held).
func (d *Driver) expireAdopted(now time.Time) {
	for _, w := range d.workers {
		if !w.adopted || w.expected || w.state == stateRegistered || w.released || now.Sub(w.adoptedAt) < d.cfg.RecoveryTimeout {
			continue
		}
		cid := ContainerIDString(w.container.GetId())
		d.log.Warn("the TaskManager of a previous attempt did not register in time; releasing its container",
			"taskmanager", w.id, "container", cid, "node", w.node, "timeout", d.cfg.RecoveryTimeout, "claimed", w.claimed)
		d.releases = append(d.releases, w.container.GetId())
		d.abandoned[w.id] = true
		d.forget(w)
		if w.claimed {
			id := d.nextID()
			d.workers[id] = &worker{id: id, state: stateWaiting}
			d.waiting = append(d.waiting, id)
			d.log.Info("asking for a container in place of the lost TaskManager", "taskmanager", id, "replaces", w.id)
		}
	}
}

// recordedContainers lists the containers the staging records name (no lock held: the
// records live on HDFS); nil without records.
func (d *Driver) recordedContainers(ctx context.Context) map[string]core.TaskManagerID {
	if d.cfg.Records == nil {
		return nil
	}
	recs, err := d.cfg.Records.ContainerRecords(ctx)
	if err != nil {
		// Not fatal: containers it could not read are replaced once YARN's report is complete.
		d.log.Warn("cannot read every container record of previous attempts", "read", len(recs), "err", err)
	}
	return recs
}

// expect takes in the recorded containers the RM has not reported as expected workers
// and opens the adoption grace (mu held). It returns how many it expects.
func (d *Driver) expect(recorded map[string]core.TaskManagerID, now time.Time) int {
	n := 0
	for _, cid := range slices.Sorted(maps.Keys(recorded)) {
		tm := recorded[cid]
		if _, reported := d.containers[cid]; reported {
			continue
		}
		id, err := ParseContainerID(cid)
		if _, dup := d.workers[tm]; err != nil || dup {
			// The TaskManager runs in another container now: the record is stale.
			d.stale = append(d.stale, cid)
			continue
		}
		w := &worker{id: tm, state: stateLaunched, container: &yarnpb.ContainerProto{Id: id},
			adopted: true, adoptedAt: now, expected: true}
		d.workers[tm] = w
		d.containers[cid] = w
		d.unclaimed = append(d.unclaimed, tm)
		n++
		d.log.Info("expecting a container of a previous attempt the RM has not reported yet",
			"taskmanager", tm, "container", cid, "grace", d.cfg.AdoptionGrace, "grace_heartbeats", d.cfg.AdoptionGraceHeartbeats)
	}
	if n > 0 {
		d.graceOpen, d.graceUntil, d.graceBeats = true, now.Add(d.cfg.AdoptionGrace), 0
	}
	return n
}

// adoptLate takes in containers of previous attempts the RM reports with an allocate: an
// expected one (or one whose TaskManager registered first) gets its full container, any
// other is adopted as at registration (mu held).
func (d *Driver) adoptLate(prev []previousContainer) {
	var fresh []previousContainer
	for _, p := range prev {
		cid := ContainerIDString(p.c.GetId())
		w, known := d.containers[cid]
		if !known {
			fresh = append(fresh, p)
			continue
		}
		if w.container.GetNodeId() != nil {
			continue // reported before
		}
		node := d.cfg.NodeIDs.NodeID(p.c.GetNodeId())
		d.nodes[NodeIDString(p.c.GetNodeId())] = true
		d.log.Info("the RM reported a kept container of a previous attempt late; adopted",
			"taskmanager", w.id, "container", cid, "node", node, "registered", w.state == stateRegistered, "claimed", w.claimed)
		w.container, w.expected = p.c, false
		if w.node == "" {
			w.node = node
		}
	}
	for _, wk := range d.adopt(fresh) {
		d.log.Info("the RM reported a container of a previous attempt late; it serves the next request",
			"taskmanager", wk.ID, "node", wk.Node)
	}
}

// expireExpected closes the adoption grace once its time and heartbeats have passed:
// expected containers neither reported by the RM nor registered by their TaskManager are
// forgotten (and their TaskManagers refused should they come later); a request counting
// on one gets a new container (mu held).
func (d *Driver) expireExpected(now time.Time) {
	if !d.graceOpen || now.Before(d.graceUntil) || d.graceBeats < d.cfg.AdoptionGraceHeartbeats {
		return
	}
	d.graceOpen = false
	for _, id := range slices.Sorted(maps.Keys(d.workers)) {
		w := d.workers[id]
		if !w.expected {
			continue
		}
		cid := ContainerIDString(w.container.GetId())
		d.log.Warn("the RM did not report a recorded container of a previous attempt and its TaskManager did not register; forgetting it",
			"taskmanager", w.id, "container", cid, "grace", d.cfg.AdoptionGrace, "heartbeats", d.graceBeats, "claimed", w.claimed)
		d.abandoned[w.id] = true
		d.stale = append(d.stale, cid)
		d.forget(w)
		if w.claimed {
			nid := d.nextID()
			d.workers[nid] = &worker{id: nid, state: stateWaiting}
			d.waiting = append(d.waiting, nid)
			d.log.Info("asking for a container in place of the expected TaskManager", "taskmanager", nid, "replaces", w.id)
		}
	}
}

// dropRecords deletes the records of completed containers (no lock held while deleting).
func (d *Driver) dropRecords(ctx context.Context) {
	d.mu.Lock()
	cids := d.stale
	d.stale = nil
	d.mu.Unlock()
	if d.cfg.Records == nil {
		return
	}
	for _, cid := range cids {
		if err := d.cfg.Records.ForgetContainer(ctx, cid); err != nil {
			d.log.Warn("cannot delete the record of a completed container; a later AM attempt will expect it briefly", "container", cid, "err", err)
		}
	}
}
