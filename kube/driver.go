package kube

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes"
	listersv1 "k8s.io/client-go/listers/core/v1"
	"k8s.io/client-go/tools/cache"

	"github.com/tidestream/tide/core"
	"github.com/tidestream/tide/drivers"
)

// DriverName is the kube driver's registry name.
const DriverName = "kube"

// DriverConfig is what the driver needs besides the cluster.
type DriverConfig struct {
	Client    kubernetes.Interface
	Namespace string
	Pod       PodSpec
	// Resync is how often pending pods are checked against the blocklist (and the
	// informer resyncs); default 2 s.
	Resync time.Duration
	Logger *slog.Logger
}

// workerPhase is where a TaskManager pod is in its life, as the driver sees it.
type workerPhase int

const (
	phasePending    workerPhase = iota // created, not registered
	phaseRecreating                    // deleted to be created again off a blocked node
	phaseRegistered                    // its TaskManager registered (Admit)
	phaseReleased                      // the AM released it; the pod is being deleted
	phaseUnmanaged                     // a TaskManager the driver did not start
)

type worker struct {
	id      core.TaskManagerID
	attempt int
	phase   workerPhase
	node    core.NodeID
	// since is when the pod was requested (or adopted).
	since time.Time
	// state, reason and message are where the pod is and why it waits (the scheduler's
	// PodScheduled=False reason and message, or a container's waiting reason), as last seen.
	state, reason, message string
	// recreated counts re-creations off blocked nodes.
	recreated int
}

// Driver starts TaskManagers as pods and reports the pods that go.
type Driver struct {
	cfg DriverConfig
	log *slog.Logger

	mu        sync.Mutex
	started   bool
	closed    bool
	handler   drivers.EventHandler
	blocked   drivers.BlockedNodes
	attempt   int
	nextIndex int
	workers   map[core.TaskManagerID]*worker
	// seen are the nodes the driver's pods ran on, kept after the pods go: when the AM may
	// not list nodes, these are the blocked nodes it can name in the NotIn term.
	seen map[string]bool
	// nodeListWarned: the "cannot list nodes" warning was logged once (it would repeat
	// for every pod created; later ones go to debug).
	nodeListWarned atomic.Bool
	// unclaimed are pods adopted from an earlier AM attempt that no request has taken yet:
	// the core asks for workers without counting them, and they serve its first requests
	// (as the YARN driver's adopted containers do).
	unclaimed []core.TaskManagerID
	pods      listersv1.PodNamespaceLister
	stop      chan struct{}
	done      sync.WaitGroup
	events    chan func(drivers.EventHandler)
	factory   informers.SharedInformerFactory
}

var (
	_ drivers.Driver        = (*Driver)(nil)
	_ drivers.Admitter      = (*Driver)(nil)
	_ drivers.PendingLister = (*Driver)(nil)
)

// NewDriver checks cfg and returns a driver that has not contacted the cluster yet.
func NewDriver(cfg DriverConfig) (*Driver, error) {
	if cfg.Client == nil {
		return nil, errors.New("kube driver: no Kubernetes client")
	}
	if cfg.Namespace == "" {
		return nil, errors.New("kube driver: kubernetes.namespace is empty")
	}
	if err := CheckClusterID(cfg.Pod.ClusterID); err != nil {
		return nil, err
	}
	if cfg.Pod.NodeNameLabel == "" {
		return nil, errors.New("kube driver: kubernetes.node-name-label is empty")
	}
	if len(cfg.Pod.Command) == 0 || cfg.Pod.Command[0] == "" {
		return nil, errors.New("kube driver: no TaskManager command (kubernetes.tide.binary)")
	}
	if cfg.Resync <= 0 {
		cfg.Resync = 2 * time.Second
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.Default()
	}
	return &Driver{
		cfg: cfg, log: cfg.Logger.With("driver", DriverName, "cluster", cfg.Pod.ClusterID),
		workers: map[core.TaskManagerID]*worker{}, seen: map[string]bool{}, stop: make(chan struct{}),
		events: make(chan func(drivers.EventHandler), 1024),
	}, nil
}

// Owner is the owner of the driver's pods as a Deployment (nil when they are owned by a pod
// or nothing).
func (d *Driver) Owner() *appsv1.Deployment {
	o := d.cfg.Pod.Owner
	if o == nil || o.Kind != "Deployment" {
		return nil
	}
	return &appsv1.Deployment{ObjectMeta: metav1.ObjectMeta{Name: o.Name, UID: o.UID}}
}

// Name is "kube".
func (d *Driver) Name() string { return DriverName }

func (d *Driver) check() error { return drivers.CallState(d.started, d.closed) }

// Start starts the pod informer, adopts the scheduled, live TaskManager pods of earlier
// AM attempts (deleting terminated and never-scheduled ones) and returns them; new pods get
// the next attempt number, so their names never collide with earlier ones.
func (d *Driver) Start(ctx context.Context, handler drivers.EventHandler, blocked drivers.BlockedNodes) ([]drivers.Worker, error) {
	d.mu.Lock()
	if d.closed {
		d.mu.Unlock()
		return nil, fmt.Errorf("start kube driver: %w", drivers.ErrClosed)
	}
	if d.started {
		d.mu.Unlock()
		return nil, fmt.Errorf("start kube driver: %w", drivers.ErrAlreadyStarted)
	}
	d.started = true
	if blocked == nil {
		blocked = func(core.NodeID) bool { return false }
	}
	d.handler, d.blocked = handler, blocked
	d.mu.Unlock()

	sel := labels.SelectorFromSet(Selector(d.cfg.Pod.ClusterID)).String()
	factory := informers.NewSharedInformerFactoryWithOptions(d.cfg.Client, d.cfg.Resync,
		informers.WithNamespace(d.cfg.Namespace),
		informers.WithTweakListOptions(func(o *metav1.ListOptions) { o.LabelSelector = sel }))
	podInf := factory.Core().V1().Pods()
	inf := podInf.Informer()
	reg, err := inf.AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc:    func(obj any) { d.onPod(obj, false) },
		UpdateFunc: func(_, obj any) { d.onPod(obj, false) },
		DeleteFunc: func(obj any) { d.onPod(obj, true) },
	})
	if err != nil {
		return nil, fmt.Errorf("start kube driver: watching pods: %w", err)
	}
	d.mu.Lock()
	d.pods = podInf.Lister().Pods(d.cfg.Namespace)
	d.mu.Unlock()
	factory.Start(d.stop)
	d.mu.Lock()
	d.factory = factory
	d.mu.Unlock()
	d.done.Add(2)
	go d.deliver()
	go d.resync()
	syncCtx, cancel := context.WithCancel(ctx)
	defer cancel()
	go func() {
		select {
		case <-d.stop:
			cancel()
		case <-syncCtx.Done():
		}
	}()
	if !cache.WaitForCacheSync(syncCtx.Done(), reg.HasSynced) {
		return nil, fmt.Errorf("start kube driver: pods in namespace %s never listed: %w", d.cfg.Namespace, context.Cause(syncCtx))
	}
	return d.recover(ctx)
}

// recover adopts the pods the informer listed.
func (d *Driver) recover(ctx context.Context) ([]drivers.Worker, error) {
	d.mu.Lock()
	defer d.mu.Unlock()
	pods, err := d.pods.List(labels.SelectorFromSet(Selector(d.cfg.Pod.ClusterID)))
	if err != nil {
		return nil, fmt.Errorf("start kube driver: listing TaskManager pods: %w", err)
	}
	sort.Slice(pods, func(i, j int) bool { return pods[i].Name < pods[j].Name })
	maxAttempt := 0
	var out []drivers.Worker
	for _, p := range pods {
		attempt, _, err := ParsePodName(d.cfg.Pod.ClusterID, p.Name)
		if err != nil {
			d.log.Warn("ignoring a pod with the TaskManager labels but not their name", "pod", p.Name, "err", err)
			continue
		}
		maxAttempt = max(maxAttempt, attempt)
		if terminated(p) || deleting(p) || !scheduled(p) {
			d.log.Info("deleting a TaskManager pod of a previous attempt", "pod", p.Name, "state", diagnostics(p))
			d.deletePod(ctx, p.Name, 0)
			continue
		}
		id := core.TaskManagerID(p.Name)
		st, reason, msg := podWaiting(p)
		d.workers[id] = &worker{id: id, attempt: attempt, phase: phasePending, node: core.NodeID(p.Spec.NodeName),
			since: time.Now(), state: st, reason: reason, message: msg}
		d.unclaimed = append(d.unclaimed, id)
		out = append(out, drivers.Worker{ID: id, Node: core.NodeID(p.Spec.NodeName)})
	}
	d.attempt = maxAttempt + 1
	d.log.Info("recovered TaskManager pods from previous attempts", "pods", len(out), "attempt", d.attempt)
	return out, nil
}

// RequestWorker creates one TaskManager pod; the pod's name is the worker id.
func (d *Driver) RequestWorker(ctx context.Context, _ drivers.WorkerSpec) (core.TaskManagerID, error) {
	d.mu.Lock()
	if err := d.check(); err != nil {
		d.mu.Unlock()
		return "", fmt.Errorf("request TaskManager pod: %w", err)
	}
	for len(d.unclaimed) > 0 {
		// A pod of a previous attempt serves this request.
		id := d.unclaimed[0]
		d.unclaimed = d.unclaimed[1:]
		if w, ok := d.workers[id]; ok && (w.phase == phasePending || w.phase == phaseRegistered) {
			d.mu.Unlock()
			d.log.Info("a TaskManager pod of a previous attempt serves the request", "pod", id)
			return id, nil
		}
	}
	d.nextIndex++
	name := podName(d.cfg.Pod.ClusterID, d.attempt, d.nextIndex)
	id := core.TaskManagerID(name)
	w := &worker{id: id, attempt: d.attempt, phase: phasePending, since: time.Now(), state: stateRequested}
	d.workers[id] = w
	d.mu.Unlock()
	if err := d.createPod(ctx, w); err != nil {
		d.mu.Lock()
		delete(d.workers, id)
		d.mu.Unlock()
		return "", err
	}
	return id, nil
}

// createPod creates w's pod with the blocklist as it is now.
func (d *Driver) createPod(ctx context.Context, w *worker) error {
	blocked := d.blockedValues(ctx)
	p, err := d.cfg.Pod.Build(string(w.id), w.attempt, blocked)
	if err != nil {
		return err
	}
	if _, err := d.cfg.Client.CoreV1().Pods(d.cfg.Namespace).Create(ctx, p, metav1.CreateOptions{}); err != nil {
		return fmt.Errorf("create TaskManager pod %s in namespace %s: %w", p.Name, d.cfg.Namespace, err)
	}
	d.log.Info("created TaskManager pod", "pod", p.Name, "blocked_nodes", strings.Join(blocked, ","))
	return nil
}

// blockedValues returns the node-name-label values of every blocked node the driver can
// see: the cluster's nodes (when it may list them) and the nodes its pods ran on.
func (d *Driver) blockedValues(ctx context.Context) []string {
	set := map[string]bool{}
	nodes, err := d.cfg.Client.CoreV1().Nodes().List(ctx, metav1.ListOptions{})
	if err != nil {
		if d.nodeListWarned.CompareAndSwap(false, true) {
			d.log.Warn("cannot list nodes; only nodes TaskManagers ran on are kept out (logged once)", "err", err)
		} else {
			d.log.Debug("cannot list nodes", "err", err)
		}
	} else {
		for _, n := range nodes.Items {
			if d.blocked(core.NodeID(n.Name)) {
				v, ok := n.Labels[d.cfg.Pod.NodeNameLabel]
				if !ok {
					d.log.Warn("blocked node lacks the node-name label: the NotIn term does not keep pods off it",
						"node", n.Name, "label", d.cfg.Pod.NodeNameLabel)
					v = n.Name
				}
				set[v] = true
			}
		}
	}
	d.mu.Lock()
	for _, w := range d.workers {
		if w.node != "" && d.blocked(w.node) {
			set[string(w.node)] = true
		}
	}
	for n := range d.seen {
		if d.blocked(core.NodeID(n)) {
			set[n] = true
		}
	}
	d.mu.Unlock()
	out := make([]string, 0, len(set))
	for v := range set {
		out = append(out, v)
	}
	sort.Strings(out)
	return out
}

func (d *Driver) deletePod(ctx context.Context, name string, grace int64) {
	opts := metav1.DeleteOptions{}
	if grace >= 0 {
		opts.GracePeriodSeconds = &grace
	}
	err := d.cfg.Client.CoreV1().Pods(d.cfg.Namespace).Delete(ctx, name, opts)
	if err != nil && !apierrors.IsNotFound(err) {
		d.log.Warn("cannot delete TaskManager pod", "pod", name, "err", err)
	}
}

// Admit accepts a TaskManager that registered, unless its node is blocked; a refused
// TaskManager of one of the driver's pods has its pod created again off the node.
func (d *Driver) Admit(ctx context.Context, w drivers.Worker) error {
	d.mu.Lock()
	err := drivers.CheckAdmission(d.log, w, d.check(), d.blocked)
	wk, ok := d.workers[w.ID]
	if err != nil {
		if errors.Is(err, drivers.ErrBlocked) && ok && wk.phase == phasePending {
			wk.phase = phaseRecreating
			d.mu.Unlock()
			d.deletePod(ctx, string(w.ID), 0)
			return err
		}
		d.mu.Unlock()
		return err
	}
	defer d.mu.Unlock()
	if !ok {
		if gone := d.podGone(w.ID); gone != "" {
			// A TaskManager whose pod was reported lost (deleted, evicted, failed) that
			// registers again during its grace period: admitting it would count a worker
			// that is about to stop, and the replacement already asked for would be one too many.
			d.log.Info("refusing a TaskManager whose pod is gone", "taskmanager", w.ID, "node", w.Node, "pod", gone)
			return fmt.Errorf("admit TaskManager %s: its pod is %s: %w", w.ID, gone, drivers.ErrUnknownWorker)
		}
		d.log.Info("admitting a TaskManager the driver did not start", "taskmanager", w.ID, "node", w.Node)
		d.workers[w.ID] = &worker{id: w.ID, phase: phaseUnmanaged, node: w.Node}
		return nil
	}
	switch wk.phase {
	case phaseReleased:
		return fmt.Errorf("admit TaskManager %s: its pod was released: %w", w.ID, drivers.ErrUnknownWorker)
	case phaseRecreating:
		return fmt.Errorf("admit TaskManager %s: its pod is being created again off a blocked node: %w", w.ID, drivers.ErrUnknownWorker)
	}
	if wk.node != "" && wk.node != w.Node {
		d.log.Warn("TaskManager reports another node than its pod's", "taskmanager", w.ID, "reported", w.Node, "pod_node", wk.node)
	}
	wk.node, wk.phase = w.Node, phaseRegistered
	return nil
}

// podGone says why a TaskManager id that names one of the cluster's pods has no pod to run
// in ("" when it is no such name or its pod runs): it was deleted, is being deleted, or ended.
// d.mu is held.
func (d *Driver) podGone(id core.TaskManagerID) string {
	if _, _, err := ParsePodName(d.cfg.Pod.ClusterID, string(id)); err != nil || d.pods == nil {
		return ""
	}
	p, err := d.pods.Get(string(id))
	switch {
	case apierrors.IsNotFound(err):
		return "deleted"
	case err != nil:
		return ""
	case deleting(p):
		return "being deleted"
	case terminated(p):
		return "terminated (" + diagnostics(p) + ")"
	}
	return ""
}

// ReleaseWorker deletes the worker's pod; OnWorkerTerminated follows from the watch.
func (d *Driver) ReleaseWorker(ctx context.Context, id core.TaskManagerID) error {
	d.mu.Lock()
	if err := d.check(); err != nil {
		d.mu.Unlock()
		return fmt.Errorf("release TaskManager %s: %w", id, err)
	}
	w, ok := d.workers[id]
	if !ok || w.phase == phaseReleased {
		d.mu.Unlock()
		return fmt.Errorf("release TaskManager %s: %w", id, drivers.ErrUnknownWorker)
	}
	if w.phase == phaseUnmanaged {
		delete(d.workers, id)
		d.mu.Unlock()
		d.notify(func(h drivers.EventHandler) { h.OnWorkerTerminated(id, "released (not started by the driver)") })
		return nil
	}
	w.phase = phaseReleased
	d.mu.Unlock()
	err := d.cfg.Client.CoreV1().Pods(d.cfg.Namespace).Delete(ctx, string(id), metav1.DeleteOptions{})
	if apierrors.IsNotFound(err) {
		d.mu.Lock()
		d.forget(id, "released; its pod was already gone")
		d.mu.Unlock()
		return nil
	}
	if err != nil {
		return fmt.Errorf("release TaskManager %s: deleting its pod: %w", id, err)
	}
	return nil
}

// notify queues an event for the handler; events go out in order on one goroutine, never
// from within a call into the driver.
func (d *Driver) notify(f func(drivers.EventHandler)) {
	select {
	case d.events <- f:
	case <-d.stop:
	}
}

// forget drops a worker and reports it terminated; d.mu is held.
func (d *Driver) forget(id core.TaskManagerID, reason string) {
	if _, ok := d.workers[id]; !ok {
		return
	}
	delete(d.workers, id)
	d.notify(func(h drivers.EventHandler) { h.OnWorkerTerminated(id, reason) })
}

func (d *Driver) deliver() {
	defer d.done.Done()
	for {
		select {
		case f := <-d.events:
			f(d.handler) // set before this goroutine started, never changed
		case <-d.stop:
			return
		}
	}
}

// onPod handles one informer event for a pod.
func (d *Driver) onPod(obj any, gone bool) {
	if t, ok := obj.(cache.DeletedFinalStateUnknown); ok {
		obj, gone = t.Obj, true
	}
	p, ok := obj.(*corev1.Pod)
	if !ok {
		return
	}
	// The fake clientset's watch does not filter by label: check them here too.
	if !labels.SelectorFromSet(Selector(d.cfg.Pod.ClusterID)).Matches(labels.Set(p.Labels)) {
		return
	}
	id := core.TaskManagerID(p.Name)
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.closed {
		return
	}
	if p.Spec.NodeName != "" {
		d.seen[p.Spec.NodeName] = true
	}
	w, ok := d.workers[id]
	if !ok {
		return
	}
	if gone && w.phase == phaseRecreating {
		w.phase = phasePending
		w.node, w.state, w.reason, w.message = "", stateRequested, "", ""
		w.recreated++
		go func() {
			if err := d.createPod(context.Background(), w); err != nil {
				d.mu.Lock()
				d.forget(id, "re-creating the pod off a blocked node failed: "+err.Error())
				d.mu.Unlock()
			}
		}()
		return
	}
	if w.phase == phaseRecreating {
		return
	}
	if gone || terminated(p) || deleting(p) {
		reason := diagnostics(p)
		if w.phase == phaseReleased {
			reason = "released: " + reason
		} else {
			d.log.Warn("TaskManager pod lost", "pod", p.Name, "node", p.Spec.NodeName, "diagnostics", reason)
		}
		d.forget(id, reason)
		if !gone && !deleting(p) {
			go d.deletePod(context.Background(), p.Name, -1)
		}
		return
	}
	if p.Spec.NodeName != "" && w.node == "" {
		w.node = core.NodeID(p.Spec.NodeName)
	}
	if st, reason, msg := podWaiting(p); st != w.state || reason != w.reason || msg != w.message {
		w.state, w.reason, w.message = st, reason, msg
		switch {
		case reason == corev1.PodReasonUnschedulable:
			d.log.Warn("TaskManager pod cannot be scheduled", "pod", p.Name, "reason", reason, "message", msg)
		case reason != "" && w.phase == phasePending:
			d.log.Info("TaskManager pod waits", "pod", p.Name, "state", st, "reason", reason, "message", msg)
		}
	}
	d.checkBlocked(w, p)
}

// checkBlocked deletes (to create again) a pod whose TaskManager has not registered when
// it is bound to a blocked node, or not yet bound and its NotIn term misses a blocked node
// the driver knows. d.mu is held.
func (d *Driver) checkBlocked(w *worker, p *corev1.Pod) {
	if w.phase != phasePending || deleting(p) {
		return
	}
	stale := false
	if p.Spec.NodeName != "" {
		stale = d.blocked(core.NodeID(p.Spec.NodeName))
	} else {
		have := map[string]bool{}
		for _, v := range excludedValues(p, d.cfg.Pod.NodeNameLabel) {
			have[v] = true
		}
		for _, o := range d.workers {
			if o.node != "" && d.blocked(o.node) && !have[string(o.node)] {
				stale = true
			}
		}
	}
	if !stale {
		return
	}
	d.log.Info("TaskManager pod is pending on or towards a blocked node: creating it again", "pod", p.Name, "node", p.Spec.NodeName)
	w.phase = phaseRecreating
	go d.deletePod(context.Background(), p.Name, 0)
}

// resync checks pending pods against the blocklist, which changes without telling the driver.
func (d *Driver) resync() {
	defer d.done.Done()
	t := time.NewTicker(d.cfg.Resync)
	defer t.Stop()
	for {
		select {
		case <-d.stop:
			return
		case <-t.C:
		}
		d.mu.Lock()
		for _, w := range d.workers {
			if w.phase != phasePending {
				continue
			}
			if p, err := d.pods.Get(string(w.id)); err == nil {
				d.checkBlocked(w, p)
			}
		}
		d.mu.Unlock()
	}
}

// Deregister deletes the cluster's TaskManager pods: the application is over.
func (d *Driver) Deregister(ctx context.Context, status drivers.FinalStatus, diagnostics string) error {
	d.mu.Lock()
	err := d.check()
	d.mu.Unlock()
	if err != nil {
		return fmt.Errorf("deregister %s: %w", status, err)
	}
	d.log.Info("application finished: deleting its TaskManager pods", "status", status, "diagnostics", diagnostics)
	sel := labels.SelectorFromSet(Selector(d.cfg.Pod.ClusterID)).String()
	pods := d.cfg.Client.CoreV1().Pods(d.cfg.Namespace)
	l, err := pods.List(ctx, metav1.ListOptions{LabelSelector: sel})
	if err != nil {
		return fmt.Errorf("deregister %s: listing TaskManager pods (%s): %w", status, sel, err)
	}
	var errs []error
	for _, p := range l.Items {
		if err := pods.Delete(ctx, p.Name, metav1.DeleteOptions{}); err != nil && !apierrors.IsNotFound(err) {
			errs = append(errs, fmt.Errorf("deleting TaskManager pod %s: %w", p.Name, err))
		}
	}
	if err := errors.Join(errs...); err != nil {
		return fmt.Errorf("deregister %s: %w", status, err)
	}
	return nil
}

// Close stops watching; the pods stay, for the next AM attempt to adopt.
func (d *Driver) Close(context.Context) error {
	d.mu.Lock()
	if d.closed {
		d.mu.Unlock()
		return nil
	}
	d.closed = true
	started, factory := d.started, d.factory
	d.mu.Unlock()
	close(d.stop)
	if started {
		d.done.Wait()
	}
	if factory != nil {
		factory.Shutdown()
	}
	return nil
}

// PodStatus is one TaskManager pod as the driver sees it.
type PodStatus struct {
	ID         core.TaskManagerID
	Node       core.NodeID
	Registered bool
	// Unschedulable is the scheduler's message while the pod cannot be placed.
	Unschedulable string
	Recreated     int
}

// Status lists the driver's pods, by id.
func (d *Driver) Status() []PodStatus {
	d.mu.Lock()
	defer d.mu.Unlock()
	out := make([]PodStatus, 0, len(d.workers))
	for _, w := range d.workers {
		ps := PodStatus{ID: w.id, Node: w.node, Registered: w.phase == phaseRegistered, Recreated: w.recreated}
		if w.reason == corev1.PodReasonUnschedulable {
			ps.Unschedulable = w.message
		}
		out = append(out, ps)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].ID < out[j].ID })
	return out
}

// PendingWorkers lists the pods whose TaskManager has not registered: where each is and
// why it waits (the scheduler's reason and message for a pod it cannot place).
func (d *Driver) PendingWorkers() []drivers.PendingWorker {
	d.mu.Lock()
	defer d.mu.Unlock()
	var out []drivers.PendingWorker
	for _, w := range d.workers {
		st := w.state
		switch w.phase {
		case phasePending:
		case phaseRecreating:
			st = stateRecreating
		default:
			continue
		}
		out = append(out, drivers.PendingWorker{ID: w.id, Node: w.node, State: st, Reason: w.reason, Message: w.message, Since: w.since})
	}
	sort.Slice(out, func(i, j int) bool { return out[i].ID < out[j].ID })
	return out
}
