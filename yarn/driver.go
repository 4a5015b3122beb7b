package yarn

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/hashicorp/go-multierror"
	"google.golang.org/protobuf/proto"

	"github.com/tidestream/tide/core"
	"github.com/tidestream/tide/drivers"
	"github.com/tidestream/tide/yarn/yarnpb"
)

// taskManagerPriority is the priority of every TaskManager container ask; one priority
// and one capability make one absolute ask key.
const taskManagerPriority = 1

// workerState is where one requested TaskManager is.
type workerState int

const (
	stateWaiting    workerState = iota // asked for, no container yet
	stateLaunching                     // container allocated, startContainers in flight
	stateLaunched                      // started, TaskManager not registered yet
	stateRegistered                    // the TaskManager registered with the AM
	stateUnmanaged                     // registered by itself, no container of ours
)

func (s workerState) String() string {
	return [...]string{"waiting", "launching", "launched", "registered", "unmanaged"}[s]
}

// worker is one TaskManager the driver was asked for (or admitted).
type worker struct {
	id        core.TaskManagerID
	state     workerState
	container *yarnpb.ContainerProto // nil while waiting
	node      core.NodeID
	released  bool // ReleaseWorker was called; the completion reports it terminated
	failures  int  // containers whose TaskManager died before registering
	// adopted: the container comes from a previous AM attempt, whose TaskManager is
	// expected to reconnect; claimed: a RequestWorker of this attempt counts on it;
	// adoptedAt: when it was adopted (its TaskManager must register by RecoveryTimeout).
	adopted   bool
	claimed   bool
	adoptedAt time.Time
	// expected: the staging records name this container of a previous attempt, but the
	// RM has not reported it yet nor has its TaskManager registered; its container holds
	// the id only. It is forgotten when the adoption grace ends first.
	expected bool
}

// Driver is the YARN ResourceManager driver: it registers the AM, heartbeats allocate
// (faster while containers are pending), asks for TaskManager containers as absolute
// asks, launches TaskManagers through the NodeManagers, reports completed containers at
// once, releases containers on downscale, keeps YARN's application blacklist in step with
// the AM's blocklist and unregisters with the final status.
//
// Every method is safe for concurrent use.
type Driver struct {
	cfg DriverConfig
	log *slog.Logger

	mu         sync.Mutex
	started    bool
	closed     bool
	finished   bool
	kept       string // a path the job's end keeps (Keep)
	handler    drivers.EventHandler
	blocked    drivers.BlockedNodes
	seq        int
	attempt    string
	workers    map[core.TaskManagerID]*worker
	waiting    []core.TaskManagerID        // FIFO of workers without a container
	unclaimed  []core.TaskManagerID        // adopted workers no RequestWorker counts on yet
	abandoned  map[core.TaskManagerID]bool // adopted TaskManagers given up on: refused if they come
	containers map[string]*worker          // by container id
	releases   []*yarnpb.ContainerIdProto  // sent with the next allocate
	askSent    int32                       // the RM's idea of our outstanding ask
	askDirty   bool                        // resend the ask even if unchanged (after a resync)
	nodes      map[string]bool             // NodeIds host:port of the cluster's running nodes
	blacklist  map[core.NodeID]bool        // what YARN's blacklist holds for us
	allBlocked bool                        // last heartbeat found every node blocked
	clusterN   int32
	maxMemory  int64
	maxVCores  int32
	hbFailures int
	// The adoption grace: while open, expected containers stand in for new ones; it
	// closes once graceUntil has passed and graceBeats allocates have been answered.
	graceOpen  bool
	graceUntil time.Time
	graceBeats int
	stale      []string // container records to delete (their containers completed)

	wake chan struct{}
	stop chan struct{}
	wg   sync.WaitGroup
}

var (
	_ drivers.Driver   = (*Driver)(nil)
	_ drivers.Admitter = (*Driver)(nil)
)

// NewDriver returns a YARN driver; Start registers the AM.
func NewDriver(cfg DriverConfig) (*Driver, error) {
	if err := cfg.validate(); err != nil {
		return nil, fmt.Errorf("YARN driver: %w", err)
	}
	cfg.withDefaults()
	return &Driver{
		cfg:        cfg,
		log:        cfg.Logger.With("driver", DriverName),
		workers:    map[core.TaskManagerID]*worker{},
		containers: map[string]*worker{},
		nodes:      map[string]bool{},
		blacklist:  map[core.NodeID]bool{},
		abandoned:  map[core.TaskManagerID]bool{},
		wake:       make(chan struct{}, 1),
		stop:       make(chan struct{}),
	}, nil
}

// Name is "yarn".
func (d *Driver) Name() string { return DriverName }

func (d *Driver) check() error { return drivers.CallState(d.started, d.closed) }

// Start registers the AM with the RM, publishes its RPC address for the TaskManagers of a
// previous attempt (with Records) and starts heartbeating. It adopts the containers YARN
// kept from previous attempts whose TaskManager it can name (from Records) and returns
// them as recovered workers: they count as workers the driver already has, so
// RequestWorker hands them out before asking YARN for new containers. An adopted
// container whose TaskManager does not register within RecoveryTimeout is released (and
// replaced, if a request counts on it); containers it cannot name are released at once.
//
// Containers the staging records name but the RM did not report at registration are
// expected (YARN may report kept containers late, with an allocate): they are not among
// the returned workers, but RequestWorker hands them out too until the adoption grace
// (AdoptionGrace, AdoptionGraceHeartbeats) ends; see adoptLate and expireExpected.
func (d *Driver) Start(ctx context.Context, handler drivers.EventHandler, blocked drivers.BlockedNodes) ([]drivers.Worker, error) {
	d.mu.Lock()
	switch {
	case d.closed:
		d.mu.Unlock()
		return nil, fmt.Errorf("start YARN driver: %w", drivers.ErrClosed)
	case d.started:
		d.mu.Unlock()
		return nil, fmt.Errorf("start YARN driver: %w", drivers.ErrAlreadyStarted)
	}
	d.mu.Unlock()
	if blocked == nil {
		blocked = func(core.NodeID) bool { return false }
	}
	reg, err := d.cfg.Scheduler.Register(ctx, d.cfg.Host, int32(d.cfg.RPCPort), d.cfg.TrackingURL)
	if err != nil {
		return nil, fmt.Errorf("start YARN driver: registering the AM at %s: %w", d.cfg.TrackingURL, err)
	}
	max := reg.GetMaximumCapability()
	want := &yarnpb.ResourceProto{Memory: proto.Int64(d.cfg.MemoryMB), VirtualCores: proto.Int32(d.cfg.VCores)}
	if err := CheckFits(want, max); err != nil {
		return nil, fmt.Errorf("start YARN driver: TaskManager container (taskmanager.memory.process.size, yarn.containers.vcores): %w", err)
	}
	if d.cfg.Records != nil {
		addr := net.JoinHostPort(d.cfg.Host, strconv.Itoa(d.cfg.RPCPort))
		if err := d.cfg.Records.PublishAMAddress(ctx, addr); err != nil {
			// Not fatal: TaskManagers of a previous attempt will not find this AM, so their
			// containers are released after RecoveryTimeout and replaced.
			d.log.Error("cannot publish the AM address for TaskManagers of a previous attempt", "address", addr, "err", err)
		}
	}
	prev := d.namePrevious(ctx, reg.GetContainersFromPreviousAttempts())
	recorded := d.recordedContainers(ctx)
	var nodes []string
	if d.cfg.Nodes != nil {
		if nodes, err = d.cfg.Nodes.RunningNodes(ctx); err != nil {
			// Not fatal: nodes are learnt from containers and node updates too.
			d.log.Warn("cannot list the cluster's nodes; the blacklist covers nodes seen in containers only", "err", err)
		}
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.closed {
		return nil, fmt.Errorf("start YARN driver: %w", drivers.ErrClosed)
	}
	d.started, d.handler, d.blocked = true, handler, blocked
	d.maxMemory, d.maxVCores = max.GetMemory(), max.GetVirtualCores()
	for _, n := range nodes {
		d.nodes[n] = true
	}
	if d.cfg.AMNode != "" {
		if node := d.cfg.NodeIDs.nodeOf(d.cfg.AMNode); blocked(node) {
			// YARN has no call that keeps a running application's next AM attempt off a node
			// (the AM's blacklist covers its containers only; the RM's own AM blacklisting,
			// yarn.am.blacklisting.enabled, follows failed AM containers), so say it here.
			d.log.Warn("this AM attempt runs on a blocked node: YARN places AM containers itself and lets no application exclude nodes from its next attempt; no TaskManager is placed there",
				"node", node, "nodemanager", d.cfg.AMNode)
		}
	}
	recovered := d.adopt(prev)
	expected := d.expect(recorded, time.Now())
	d.log.Info("YARN driver started", "queue", reg.GetQueue(), "nodes", len(nodes),
		"container_mb", d.cfg.MemoryMB, "container_vcores", d.cfg.VCores, "node_ids", d.cfg.NodeIDs,
		"heartbeat", d.cfg.Heartbeat, "fast_heartbeat", d.cfg.FastHeartbeat, "recovered", len(recovered), "expected", expected)
	d.wg.Add(1)
	go d.heartbeatLoop()
	return recovered, nil
}

// RequestWorker asks for one more TaskManager container. The id is the TaskManager's from
// the start; the container is asked for with the next heartbeat, which comes at once.
func (d *Driver) RequestWorker(_ context.Context, spec drivers.WorkerSpec) (core.TaskManagerID, error) {
	d.mu.Lock()
	defer d.mu.Unlock()
	if err := d.check(); err != nil {
		return "", fmt.Errorf("request YARN TaskManager: %w", err)
	}
	if spec.MemoryMB > 0 && int64(spec.MemoryMB) != d.cfg.MemoryMB {
		d.log.Warn("worker spec asks for another container size than configured; using the configured one",
			"asked_mb", spec.MemoryMB, "configured_mb", d.cfg.MemoryMB)
	}
	if len(d.unclaimed) > 0 {
		// A TaskManager of a previous attempt serves this request.
		id := d.unclaimed[0]
		d.unclaimed = d.unclaimed[1:]
		d.workers[id].claimed = true
		d.log.Info("a TaskManager of a previous attempt serves the request", "taskmanager", id, "state", d.workers[id].state)
		return id, nil
	}
	id := d.nextID()
	d.workers[id] = &worker{id: id, state: stateWaiting}
	d.waiting = append(d.waiting, id)
	d.kick()
	return id, nil
}

// nextID is a TaskManager id no worker has had in this attempt (mu held).
func (d *Driver) nextID() core.TaskManagerID {
	for {
		d.seq++
		id := core.TaskManagerID(fmt.Sprintf("tm-yarn-%d", d.seq))
		if d.attempt != "" {
			id = core.TaskManagerID(fmt.Sprintf("tm-%s-%d", d.attempt, d.seq))
		}
		if _, taken := d.workers[id]; !taken && !d.abandoned[id] {
			return id
		}
	}
}

// SetAttempt makes TaskManager ids carry the AM attempt (e.g. "2"), so ids of different
// attempts never collide in logs and checkpoints' history.
func (d *Driver) SetAttempt(attempt string) {
	d.mu.Lock()
	d.attempt = attempt
	d.mu.Unlock()
}

// Admit accepts a registering TaskManager unless its node is blocked. A TaskManager the
// driver did not start (one started by hand against a YARN AM) is accepted as unmanaged.
func (d *Driver) Admit(_ context.Context, w drivers.Worker) error {
	d.mu.Lock()
	defer d.mu.Unlock()
	if err := drivers.CheckAdmission(d.log, w, d.check(), d.blocked); err != nil {
		return err
	}
	if d.abandoned[w.ID] {
		return fmt.Errorf("admit TaskManager %s on node %s: it did not register within %s of the AM restart and its container was released: %w",
			w.ID, w.Node, d.cfg.RecoveryTimeout, drivers.ErrUnknownWorker)
	}
	wk, ok := d.workers[w.ID]
	if !ok {
		d.log.Info("admitting a TaskManager the driver did not start", "taskmanager", w.ID, "node", w.Node)
		d.workers[w.ID] = &worker{id: w.ID, state: stateUnmanaged, node: w.Node}
		return nil
	}
	if wk.state == stateWaiting {
		return fmt.Errorf("admit TaskManager %s: no container was allocated for it yet: %w", w.ID, drivers.ErrUnknownWorker)
	}
	if wk.node != "" && wk.node != w.Node {
		d.log.Warn("TaskManager reports another node than its container's", "taskmanager", w.ID, "reported", w.Node, "container_node", wk.node)
	}
	if wk.adopted && wk.state != stateRegistered {
		d.log.Info("TaskManager of a previous attempt registered again", "taskmanager", w.ID, "node", w.Node,
			"container", ContainerIDString(wk.container.GetId()), "after", time.Since(wk.adoptedAt).Round(time.Millisecond),
			"reported_by_rm", !wk.expected)
	}
	if wk.expected {
		// Its TaskManager is alive, so its container is: adopted before the RM reported it.
		wk.expected, wk.node = false, w.Node
	}
	wk.state = stateRegistered
	return nil
}

// ReleaseWorker gives the TaskManager's container back (the RM stops it); its
// OnWorkerTerminated follows when the RM reports the container completed. A worker still
// waiting for a container is dropped from the ask.
func (d *Driver) ReleaseWorker(_ context.Context, id core.TaskManagerID) error {
	d.mu.Lock()
	defer d.mu.Unlock()
	if err := d.check(); err != nil {
		return fmt.Errorf("release TaskManager %s: %w", id, err)
	}
	w, ok := d.workers[id]
	if !ok || w.released {
		return fmt.Errorf("release TaskManager %s: %w", id, drivers.ErrUnknownWorker)
	}
	w.released = true
	switch {
	case w.expected:
		// The RM may never report this container: give it back in case it lives, and
		// report the TaskManager gone now.
		cid := ContainerIDString(w.container.GetId())
		d.log.Info("releasing an expected container of a previous attempt", "taskmanager", id, "container", cid)
		d.releases = append(d.releases, w.container.GetId())
		d.abandoned[id] = true
		d.stale = append(d.stale, cid)
		d.forget(w)
		d.notifyLater(func(h drivers.EventHandler) { h.OnWorkerTerminated(id, "released by the AM") })
	case w.container != nil:
		d.releases = append(d.releases, w.container.GetId())
		d.log.Info("releasing TaskManager container", "taskmanager", id, "container", ContainerIDString(w.container.GetId()), "node", w.node)
	default:
		// Waiting or unmanaged: nothing to give back to YARN.
		d.forget(w)
		d.notifyLater(func(h drivers.EventHandler) { h.OnWorkerTerminated(id, "released by the AM") })
	}
	d.kick()
	return nil
}

// notifyLater delivers an event from a goroutine, so it always arrives after the call
// that caused it has returned (mu held).
func (d *Driver) notifyLater(f func(drivers.EventHandler)) {
	h := d.handler
	d.wg.Add(1)
	go func() {
		defer d.wg.Done()
		f(h)
	}()
}

// forget drops w from every index (mu held).
func (d *Driver) forget(w *worker) {
	delete(d.workers, w.id)
	if w.container != nil {
		delete(d.containers, ContainerIDString(w.container.GetId()))
	}
	d.waiting = slices.DeleteFunc(d.waiting, func(id core.TaskManagerID) bool { return id == w.id })
	d.unclaimed = slices.DeleteFunc(d.unclaimed, func(id core.TaskManagerID) bool { return id == w.id })
}

// kick makes the heartbeat loop run now (mu held or not).
func (d *Driver) kick() {
	select {
	case d.wake <- struct{}{}:
	default:
	}
}

// Deregister unregisters the application with its final status and diagnostics, waiting
// until the RM has stored them.
func (d *Driver) Deregister(ctx context.Context, status drivers.FinalStatus, diagnostics string) error {
	d.mu.Lock()
	if err := d.check(); err != nil {
		d.mu.Unlock()
		return fmt.Errorf("deregister YARN application (%s): %w", status, err)
	}
	d.finished = true
	d.mu.Unlock()
	if err := d.cfg.Scheduler.Finish(ctx, finalStatusProto(status), diagnostics, d.cfg.TrackingURL); err != nil {
		return fmt.Errorf("deregister YARN application (%s): %w", status, err)
	}
	d.log.Info("YARN application unregistered", "status", status, "diagnostics", diagnostics)
	d.removeStaging(ctx, status)
	return nil
}

// Keep names a path the job's end keeps (the checkpoint its retention retains, say under
// RETAIN_ON_CANCELLATION): when it lies in the staging directory, the directory stays after
// the application ends. Call it before Deregister.
func (d *Driver) Keep(path string) {
	d.mu.Lock()
	d.kept = path
	d.mu.Unlock()
}

// removeStaging deletes the application's staging directory once the application has
// finished for good: succeeded, or killed (cancelled). After a failure it stays, since the
// checkpoints live there unless state.checkpoints.dir says otherwise; so it does when it
// holds the checkpoint the job's end keeps (Keep).
func (d *Driver) removeStaging(ctx context.Context, status drivers.FinalStatus) {
	if d.cfg.Records == nil {
		return
	}
	if status != drivers.StatusSucceeded && status != drivers.StatusKilled {
		d.log.Info("keeping the staging directory (its checkpoints may be needed)", "status", status)
		return
	}
	d.mu.Lock()
	kept := d.kept
	d.mu.Unlock()
	if dir := d.cfg.Records.Dir(); kept != "" && strings.HasPrefix(kept, dir+"/") {
		d.log.Info("keeping the staging directory: it holds the checkpoint the job keeps", "status", status, "dir", dir, "checkpoint", kept)
		return
	}
	if err := d.cfg.Records.Remove(ctx); err != nil {
		d.log.Warn("the application finished but its staging directory stays", "err", err)
		return
	}
	d.log.Info("staging directory removed", "status", status)
}

func finalStatusProto(s drivers.FinalStatus) yarnpb.FinalApplicationStatusProto {
	switch s {
	case drivers.StatusSucceeded:
		return yarnpb.FinalApplicationStatusProto_APP_SUCCEEDED
	case drivers.StatusFailed:
		return yarnpb.FinalApplicationStatusProto_APP_FAILED
	case drivers.StatusKilled:
		return yarnpb.FinalApplicationStatusProto_APP_KILLED
	}
	return yarnpb.FinalApplicationStatusProto_APP_UNDEFINED
}

// Close stops heartbeating and closes the connections; it is idempotent.
func (d *Driver) Close(ctx context.Context) error {
	d.mu.Lock()
	if d.closed {
		d.mu.Unlock()
		return nil
	}
	d.closed = true
	close(d.stop)
	d.mu.Unlock()
	done := make(chan struct{})
	go func() { d.wg.Wait(); close(done) }()
	var errs *multierror.Error
	select {
	case <-done:
	case <-ctx.Done():
		errs = multierror.Append(errs, fmt.Errorf("close YARN driver: waiting for the heartbeat loop: %w", ctx.Err()))
	}
	if err := d.cfg.Scheduler.Close(); err != nil {
		errs = multierror.Append(errs, fmt.Errorf("close YARN driver: scheduler client: %w", err))
	}
	if err := d.cfg.Containers.Close(); err != nil {
		errs = multierror.Append(errs, fmt.Errorf("close YARN driver: NodeManager client: %w", err))
	}
	if c, ok := d.cfg.Nodes.(io.Closer); ok {
		if err := c.Close(); err != nil {
			errs = multierror.Append(errs, fmt.Errorf("close YARN driver: node lister: %w", err))
		}
	}
	if c, ok := d.cfg.Records.(io.Closer); ok {
		if err := c.Close(); err != nil {
			errs = multierror.Append(errs, fmt.Errorf("close YARN driver: staging directory: %w", err))
		}
	}
	return errs.ErrorOrNil()
}

// Status is a snapshot of the driver, for logs and tests.
type Status struct {
	Waiting, Launching, Launched, Registered int
	ClusterNodes                             int
	Blacklisted                              []core.NodeID
	AllNodesBlocked                          bool
}

// Status reports what the driver is waiting for.
func (d *Driver) Status() Status {
	d.mu.Lock()
	defer d.mu.Unlock()
	var s Status
	for _, w := range d.workers {
		switch w.state {
		case stateWaiting:
			s.Waiting++
		case stateLaunching:
			s.Launching++
		case stateLaunched:
			s.Launched++
		case stateRegistered, stateUnmanaged:
			s.Registered++
		}
	}
	s.ClusterNodes = int(d.clusterN)
	for n := range d.blacklist {
		s.Blacklisted = append(s.Blacklisted, n)
	}
	s.AllNodesBlocked = d.allBlocked
	return s
}

// errAllNodesBlocked is reported when every cluster node is blocked while containers are
// wanted: YARN would never allocate one and never say so.
var errAllNodesBlocked = errors.New("every YARN node is blocked")
