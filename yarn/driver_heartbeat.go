package yarn

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"time"

	"google.golang.org/protobuf/proto"

	"github.com/tidestream/tide/core"
	"github.com/tidestream/tide/drivers"
	"github.com/tidestream/tide/yarn/yarnpb"
)

// heartbeatLoop calls allocate every Heartbeat, every FastHeartbeat while containers are
// wanted or being released, and at once when kicked.
func (d *Driver) heartbeatLoop() {
	defer d.wg.Done()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go func() {
		select {
		case <-d.stop:
			cancel()
		case <-ctx.Done():
		}
	}()
	timer := time.NewTimer(0)
	defer timer.Stop()
	for {
		select {
		case <-d.stop:
			return
		case <-timer.C:
		case <-d.wake:
			if !timer.Stop() {
				select {
				case <-timer.C:
				default:
				}
			}
		}
		if fatal := d.heartbeat(ctx); fatal != nil {
			d.mu.Lock()
			h := d.handler
			d.mu.Unlock()
			h.OnError(fatal)
			return
		}
		timer.Reset(d.interval())
	}
}

// interval is the time to the next heartbeat.
func (d *Driver) interval() time.Duration {
	d.mu.Lock()
	defer d.mu.Unlock()
	if len(d.waiting) > 0 || len(d.releases) > 0 || d.askSent > 0 || d.graceOpen {
		return d.cfg.FastHeartbeat
	}
	return d.cfg.Heartbeat
}

// heartbeat sends one allocate with the blacklist change, the ask and the releases, and
// handles the answer. It returns an error only when the driver cannot go on.
func (d *Driver) heartbeat(ctx context.Context) error {
	d.mu.Lock()
	if d.finished {
		d.mu.Unlock()
		return nil
	}
	now := time.Now()
	d.expireAdopted(now)
	d.expireExpected(now)
	add, rem := d.blacklistDelta()
	var req AllocateRequest
	want := int32(len(d.waiting))
	if want != d.askSent || d.askDirty {
		req.Asks = []*yarnpb.ResourceRequestProto{d.ask(want)}
	}
	req.Releases, d.releases = d.releases, nil
	req.Progress = d.progress()
	d.mu.Unlock()

	if len(add) > 0 || len(rem) > 0 {
		if err := d.cfg.Scheduler.UpdateBlacklist(nodeStrings(add), nodeStrings(rem)); err != nil {
			d.log.Error("blacklist update refused", "add", add, "remove", rem, "err", err)
		} else {
			d.mu.Lock()
			for _, n := range add {
				d.blacklist[n] = true
			}
			for _, n := range rem {
				delete(d.blacklist, n)
			}
			d.mu.Unlock()
			d.log.Info("YARN blacklist follows the blocklist", "added", add, "removed", rem)
		}
	}
	resp, err := d.cfg.Scheduler.Allocate(ctx, req)
	if err != nil {
		return d.allocateFailed(ctx, req, err)
	}
	d.mu.Lock()
	d.hbFailures = 0
	d.graceBeats++
	if req.Asks != nil {
		d.askSent, d.askDirty = want, false
	}
	d.mu.Unlock()
	err = d.handleResponse(ctx, resp)
	d.dropRecords(ctx)
	return err
}

// allocateFailed puts the request's releases back and decides whether to go on.
func (d *Driver) allocateFailed(ctx context.Context, req AllocateRequest, err error) error {
	d.mu.Lock()
	d.releases = append(req.Releases, d.releases...)
	d.hbFailures++
	n := d.hbFailures
	d.mu.Unlock()
	if ctx.Err() != nil {
		return nil // closing
	}
	if errors.Is(err, ErrNotRegistered) {
		return d.resync(ctx, "the RM does not know this attempt")
	}
	if n >= d.cfg.MaxHeartbeatFailures {
		return fmt.Errorf("YARN allocate failed %d times in a row: %w", n, err)
	}
	d.log.Warn("YARN allocate failed; trying again", "failures", n, "err", err)
	return nil
}

// resync registers again after the RM forgot the attempt (RM restart) and resends the
// whole ask; the AMRM client resends the whole blacklist itself.
func (d *Driver) resync(ctx context.Context, why string) error {
	d.log.Warn("re-registering with the ResourceManager", "why", why)
	if _, err := d.cfg.Scheduler.Register(ctx, d.cfg.Host, int32(d.cfg.RPCPort), d.cfg.TrackingURL); err != nil {
		return fmt.Errorf("re-registering the AM after %s: %w", why, err)
	}
	d.mu.Lock()
	d.askDirty = true
	d.mu.Unlock()
	d.kick()
	return nil
}

// ask is the one absolute TaskManager ask for count containers (mu held).
func (d *Driver) ask(count int32) *yarnpb.ResourceRequestProto {
	return &yarnpb.ResourceRequestProto{
		Priority:      &yarnpb.PriorityProto{Priority: proto.Int32(taskManagerPriority)},
		ResourceName:  proto.String("*"),
		Capability:    &yarnpb.ResourceProto{Memory: proto.Int64(d.cfg.MemoryMB), VirtualCores: proto.Int32(d.cfg.VCores)},
		NumContainers: proto.Int32(count),
		RelaxLocality: proto.Bool(true),
	}
}

// progress is the share of wanted TaskManagers that registered, as YARN shows it (mu held).
func (d *Driver) progress() float32 {
	if len(d.workers) == 0 {
		return 0
	}
	reg := 0
	for _, w := range d.workers {
		if w.state == stateRegistered || w.state == stateUnmanaged {
			reg++
		}
	}
	return float32(reg) / float32(len(d.workers))
}

// blacklistDelta compares the blocklist, over the nodes the driver knows, with what
// YARN's blacklist holds (mu held).
func (d *Driver) blacklistDelta() (add, rem []core.NodeID) {
	want := map[core.NodeID]bool{}
	for hp := range d.nodes {
		if n := d.cfg.NodeIDs.nodeOf(hp); d.blocked(n) {
			want[n] = true
		}
	}
	for n := range want {
		if !d.blacklist[n] {
			add = append(add, n)
		}
	}
	for n := range d.blacklist {
		if !want[n] {
			rem = append(rem, n)
		}
	}
	slices.Sort(add)
	slices.Sort(rem)
	return add, rem
}

func nodeStrings(ns []core.NodeID) []string {
	out := make([]string, len(ns))
	for i, n := range ns {
		out[i] = string(n)
	}
	return out
}

// handleResponse takes in allocated and completed containers, node updates and commands.
func (d *Driver) handleResponse(ctx context.Context, resp *yarnpb.AllocateResponseProto) error {
	// proto2: an absent command reads as the enum's first value, AM_RESYNC.
	switch cmd := resp.AMCommand; {
	case cmd == nil:
	case *cmd == yarnpb.AMCommandProto_AM_RESYNC:
		if err := d.resync(ctx, "AM_RESYNC"); err != nil {
			return err
		}
	case *cmd == yarnpb.AMCommandProto_AM_SHUTDOWN:
		return errors.New("the YARN ResourceManager told the AM to shut down (AM_SHUTDOWN)")
	}
	type launch struct {
		w *worker
		c *yarnpb.ContainerProto
	}
	var launches []launch
	late := d.namePrevious(ctx, resp.GetContainersFromPreviousAttempts())
	d.mu.Lock()
	d.adoptLate(late)
	d.clusterN = resp.GetNumClusterNodes()
	for _, r := range resp.GetUpdatedNodes() {
		hp := NodeIDString(r.GetNodeId())
		if r.GetNodeState() == yarnpb.NodeStateProto_NS_RUNNING {
			d.nodes[hp] = true
		} else {
			delete(d.nodes, hp)
		}
	}
	for _, c := range resp.GetAllocatedContainers() {
		d.askSent = max(0, d.askSent-1) // the RM took one off the outstanding ask
		cid := ContainerIDString(c.GetId())
		node := d.cfg.NodeIDs.NodeID(c.GetNodeId())
		d.nodes[NodeIDString(c.GetNodeId())] = true
		switch {
		case len(d.waiting) == 0:
			d.log.Info("releasing a surplus container", "container", cid, "node", node)
			d.releases = append(d.releases, c.GetId())
		case d.blocked(node):
			// Allocated before the blacklist reached the RM.
			d.log.Info("releasing a container on a blocked node", "container", cid, "node", node)
			d.releases = append(d.releases, c.GetId())
		default:
			id := d.waiting[0]
			d.waiting = d.waiting[1:]
			w := d.workers[id]
			w.container, w.node, w.state = c, node, stateLaunching
			d.containers[cid] = w
			launches = append(launches, launch{w, c})
			d.log.Info("container allocated", "taskmanager", id, "container", cid, "node", node)
		}
	}
	var events []func(drivers.EventHandler)
	for _, s := range resp.GetCompletedContainerStatuses() {
		if ev := d.completed(s); ev != nil {
			events = append(events, ev)
		}
	}
	d.checkAllBlocked()
	h := d.handler
	d.mu.Unlock()

	for _, ev := range events {
		ev(h)
	}
	for _, l := range launches {
		d.wg.Add(1)
		go d.launch(ctx, l.w, l.c)
	}
	return nil
}

// completed handles one completed container (mu held) and returns the event to send.
// A registered (or released) TaskManager's container ending is a lost TaskManager at
// once; one that ends before its TaskManager registered is asked for again.
func (d *Driver) completed(s *yarnpb.ContainerStatusProto) func(drivers.EventHandler) {
	cid := ContainerIDString(s.GetContainerId())
	if d.cfg.Records != nil {
		d.stale = append(d.stale, cid)
	}
	w, ok := d.containers[cid]
	if !ok {
		return nil // a surplus or blocked-node container we released, or a previous attempt's
	}
	reason := fmt.Sprintf("YARN container %s on %s completed with exit status %d: %s", cid, w.node, s.GetExitStatus(), s.GetDiagnostics())
	d.log.Info("container completed", "taskmanager", w.id, "container", cid, "node", w.node,
		"exit_status", s.GetExitStatus(), "state", w.state, "released", w.released)
	delete(d.containers, cid)
	if w.released || w.state == stateRegistered {
		d.forget(w)
		id := w.id
		return func(h drivers.EventHandler) { h.OnWorkerTerminated(id, reason) }
	}
	if w.adopted && !w.claimed {
		// Nothing of this attempt counts on it: forget it quietly.
		d.forget(w)
		return nil
	}
	return d.retry(w, reason)
}

// retry asks for a new container for w, whose container died before its TaskManager
// registered; after MaxLaunchFailures the request is reported failed (mu held).
func (d *Driver) retry(w *worker, reason string) func(drivers.EventHandler) {
	w.failures++
	w.container, w.node, w.adopted, w.expected = nil, "", false, false
	if w.failures >= d.cfg.MaxLaunchFailures {
		d.forget(w)
		d.log.Warn("TaskManager request failed", "taskmanager", w.id, "failures", w.failures, "reason", reason)
		msg := fmt.Sprintf("TaskManager %s: %d containers failed before it registered; last: %s", w.id, w.failures, reason)
		return func(h drivers.EventHandler) { h.OnWorkerRequestFailed(msg) }
	}
	d.log.Warn("TaskManager container failed before registering; asking for another", "taskmanager", w.id, "failures", w.failures, "reason", reason)
	w.state = stateWaiting
	d.waiting = append(d.waiting, w.id)
	d.kick()
	return nil
}

// checkAllBlocked logs, once per change, when containers are wanted but every node of
// the cluster is blocked: YARN would wait forever without a word (mu held).
func (d *Driver) checkAllBlocked() {
	n := int(d.clusterN)
	if n == 0 {
		n = len(d.nodes)
	}
	blockedNodes := 0
	for hp := range d.nodes {
		if d.blocked(d.cfg.NodeIDs.nodeOf(hp)) {
			blockedNodes++
		}
	}
	all := len(d.waiting) > 0 && n > 0 && blockedNodes >= n
	if all && !d.allBlocked {
		d.log.Error("no TaskManager can be started", "err", errAllNodesBlocked, "nodes", n, "waiting", len(d.waiting),
			"hint", "unblock a node (REST DELETE /blocklist/<node>) or add nodes to the cluster")
	} else if !all && d.allBlocked {
		d.log.Info("a node is available again for TaskManager containers")
	}
	d.allBlocked = all
}

// launch starts the TaskManager in its container through the NodeManager. A refused
// start gives the container back and asks for another.
func (d *Driver) launch(ctx context.Context, w *worker, c *yarnpb.ContainerProto) {
	defer d.wg.Done()
	cid := ContainerIDString(c.GetId())
	if d.cfg.Records != nil {
		// Before the start, so a later attempt can always name this TaskManager.
		if err := d.cfg.Records.RecordContainer(ctx, cid, w.id); err != nil {
			d.log.Warn("cannot record the container's TaskManager; a later AM attempt will replace it", "taskmanager", w.id, "container", cid, "err", err)
		}
	}
	err := d.cfg.Containers.StartContainer(ctx, c, d.cfg.Launch(w.id, w.node))
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.containers[cid] != w {
		return // completed (or released and completed) meanwhile
	}
	if err == nil {
		if w.state == stateLaunching {
			w.state = stateLaunched
		}
		d.log.Info("TaskManager launched", "taskmanager", w.id, "container", cid, "node", w.node)
		return
	}
	if ctx.Err() != nil {
		return
	}
	d.log.Warn("starting the TaskManager container failed; releasing it", "taskmanager", w.id, "container", cid, "err", err)
	delete(d.containers, cid)
	d.releases = append(d.releases, c.GetId())
	if w.released {
		d.forget(w)
		id := w.id
		d.notifyLater(func(h drivers.EventHandler) { h.OnWorkerTerminated(id, "released by the AM") })
		return
	}
	if ev := d.retry(w, err.Error()); ev != nil {
		d.notifyLater(ev)
	}
}
