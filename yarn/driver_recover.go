package yarn

import (
	"context"
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

// adopt takes in the named containers of a previous attempt as launched workers and
// releases the others (mu held). It returns the adopted workers.
func (d *Driver) adopt(prev []previousContainer) []drivers.Worker {
	var out []drivers.Worker
	now := time.Now()
	for _, p := range prev {
		cid := ContainerIDString(p.c.GetId())
		if _, dup := d.workers[p.tm]; p.tm == "" || dup {
			d.log.Info("releasing a container of a previous attempt", "container", cid, "taskmanager", p.tm)
			d.releases = append(d.releases, p.c.GetId())
			continue
		}
		node := d.cfg.NodeIDs.NodeID(p.c.GetNodeId())
		d.nodes[NodeIDString(p.c.GetNodeId())] = true
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
		if !w.adopted || w.state == stateRegistered || w.released || now.Sub(w.adoptedAt) < d.cfg.RecoveryTimeout {
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
