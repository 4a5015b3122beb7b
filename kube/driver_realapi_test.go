package kube

import (
	"context"
	"fmt"
	"log/slog"
	"os"
	"reflect"
	"strings"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"

	"github.com/tidestream/tide/core"
	"github.com/tidestream/tide/drivers"
	"github.com/tidestream/tide/internal/testkit"
	"github.com/tidestream/tide/test/kube/kubetest"
)

// The driver against the control plane of `make k8s-up`: the real kube-apiserver validates
// and stores the pods, the real kube-scheduler places them (NodeAffinity included), the
// process kubelet runs this test binary as each pod's TaskManager (TestMain's helper), and
// the controller-manager's garbage collector follows owner references. Skipped without the
// harness (TIDE_REQUIRE_KUBE=1 fails instead).

// realCluster is one test's namespace on the harness, with an owner object standing in for
// the AM's pod.
type realCluster struct {
	env   *kubetest.Env
	cs    kubernetes.Interface
	ns    string
	owner *corev1.ConfigMap
	log   *syncBuffer
}

func newRealCluster(t *testing.T) *realCluster {
	t.Helper()
	env := kubetest.Load(t)
	c := &realCluster{env: env, cs: env.Client(t), ns: env.Namespace(t), log: &syncBuffer{}}
	owner, err := c.cs.CoreV1().ConfigMaps(c.ns).Create(context.Background(),
		&corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "am-owner"}}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	c.owner = owner
	t.Cleanup(func() {
		if t.Failed() {
			t.Logf("driver log:\n%s", c.log.String())
		}
	})
	return c
}

// driver is a kube driver for cluster id in the test's namespace, its TaskManager pods
// owned by the owner object; the pods run this test binary as a TaskManager.
func (c *realCluster) driver(t *testing.T, clusterID string) *Driver {
	t.Helper()
	spec := testPodSpec()
	spec.ClusterID = clusterID
	spec.ServiceAccount = ""
	spec.Owner = &metav1.OwnerReference{APIVersion: "v1", Kind: "ConfigMap", Name: c.owner.Name, UID: c.owner.UID,
		Controller: ptrTo(true), BlockOwnerDeletion: ptrTo(true)}
	d, err := NewDriver(DriverConfig{Client: c.cs, Namespace: c.ns, Pod: spec, Resync: 200 * time.Millisecond,
		Logger: slog.New(slog.NewTextHandler(c.log, nil)).With("test", t.Name())})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = d.Close(context.Background()) })
	return d
}

// startDriver is driver started with the events ev (nil: none recorded) and the blocked
// nodes blocked (nil: none).
func (c *realCluster) startDriver(t *testing.T, clusterID string, ev *events, blocked drivers.BlockedNodes) *Driver {
	t.Helper()
	if ev == nil {
		ev = newEvents()
	}
	d := c.driver(t, clusterID)
	if _, err := d.Start(ctxT(t), ev.handler(), blocked); err != nil {
		t.Fatal(err)
	}
	return d
}

// request asks d for n TaskManagers of one slot and returns their ids.
func request(t *testing.T, d *Driver, n int) []core.TaskManagerID {
	t.Helper()
	ids := make([]core.TaskManagerID, 0, n)
	for range n {
		id, err := d.RequestWorker(ctxT(t), drivers.WorkerSpec{Slots: 1})
		if err != nil {
			t.Fatal(err)
		}
		ids = append(ids, id)
	}
	return ids
}

// kill SIGKILLs the TaskManager process of pod id, as a crash would.
func (c *realCluster) kill(t *testing.T, id core.TaskManagerID) {
	t.Helper()
	if err := c.env.KillContainer(c.ns, string(id)); err != nil {
		t.Fatal(err)
	}
}

// waitPodGone waits until pod id is no longer in the API server; what says why it goes.
func (c *realCluster) waitPodGone(t *testing.T, id core.TaskManagerID, what string) {
	t.Helper()
	testkit.WaitFor(t, what, func() (bool, error) {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		_, err := c.cs.CoreV1().Pods(c.ns).Get(ctx, string(id), metav1.GetOptions{})
		return apierrors.IsNotFound(err), err
	})
}

// events records what a driver reports.
type events struct {
	mu     sync.Mutex
	lost   map[core.TaskManagerID]string
	errors []string
}

func newEvents() *events { return &events{lost: map[core.TaskManagerID]string{}} }

func (e *events) handler() drivers.EventHandler {
	return drivers.EventFuncs{
		WorkerTerminated: func(id core.TaskManagerID, reason string) {
			e.mu.Lock()
			e.lost[id] = reason
			e.mu.Unlock()
		},
		WorkerRequestFailed: func(reason string) { e.mu.Lock(); e.errors = append(e.errors, reason); e.mu.Unlock() },
		Error:               func(err error) { e.mu.Lock(); e.errors = append(e.errors, err.Error()); e.mu.Unlock() },
	}
}

func (e *events) waitLost(t *testing.T, id core.TaskManagerID) string {
	t.Helper()
	var reason string
	testkit.WaitFor(t, fmt.Sprintf("TaskManager %s reported lost", id), func() (bool, error) {
		e.mu.Lock()
		defer e.mu.Unlock()
		r, ok := e.lost[id]
		reason = r
		return ok, fmt.Errorf("lost so far: %v, errors %v", e.lost, e.errors)
	})
	return reason
}

func (c *realCluster) pod(t *testing.T, name string) *corev1.Pod {
	t.Helper()
	p, err := c.cs.CoreV1().Pods(c.ns).Get(context.Background(), name, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// waitRegistered waits until the pod of id runs and its TaskManager process printed
// "registered <id> <node>" (the node it got through the downward API), and admits it as
// the AM would on registration; it returns the node.
func (c *realCluster) waitRegistered(t *testing.T, d *Driver, id core.TaskManagerID) core.NodeID {
	t.Helper()
	var line string
	testkit.WaitFor(t, fmt.Sprintf("TaskManager %s started by the kubelet", id), func() (bool, error) {
		b, err := os.ReadFile(c.env.PodLog(c.ns, string(id), containerName))
		line = strings.TrimSpace(string(b))
		return strings.HasPrefix(line, "registered "), err
	})
	f := strings.Fields(line)
	p := c.pod(t, string(id))
	if len(f) != 3 || f[1] != string(id) || f[2] != p.Spec.NodeName || p.Spec.NodeName == "" {
		t.Fatalf("TaskManager %s printed %q; its pod is on node %q", id, line, p.Spec.NodeName)
	}
	if err := d.Admit(context.Background(), drivers.Worker{ID: id, Node: core.NodeID(f[2])}); err != nil {
		t.Fatalf("admitting %s: %v", id, err)
	}
	return core.NodeID(f[2])
}

func blockedSet(nodes ...string) drivers.BlockedNodes {
	m := map[core.NodeID]bool{}
	for _, n := range nodes {
		m[core.NodeID(n)] = true
	}
	return func(n core.NodeID) bool { return m[n] }
}

func TestRealAPIPodShapeOwnerAndLabels(t *testing.T) {
	c := newRealCluster(t)
	d := c.startDriver(t, "shape", nil, nil)
	id := request(t, d, 1)[0]
	if id != "shape-taskmanager-1-1" {
		t.Fatalf("first pod %s, want shape-taskmanager-1-1", id)
	}
	node := c.waitRegistered(t, d, id)
	p := c.pod(t, string(id))
	want := map[string]string{LabelType: TypeValue, LabelApp: "shape", LabelComponent: ComponentTaskManager,
		LabelAttempt: "1", LabelJob: "job-1", LabelAMRun: "run-1"}
	if !reflect.DeepEqual(p.Labels, want) {
		t.Errorf("labels %v, want %v", p.Labels, want)
	}
	if len(p.OwnerReferences) != 1 || p.OwnerReferences[0].UID != c.owner.UID || p.OwnerReferences[0].Controller == nil || !*p.OwnerReferences[0].Controller {
		t.Errorf("owner references %+v, want the owner %s as controller", p.OwnerReferences, c.owner.UID)
	}
	if p.Spec.RestartPolicy != corev1.RestartPolicyNever || p.Spec.Affinity != nil {
		t.Errorf("restartPolicy %s, affinity %+v: want Never and none (nothing blocked)", p.Spec.RestartPolicy, p.Spec.Affinity)
	}
	if !contains(c.env.Nodes, string(node)) {
		t.Errorf("placed on %s, not one of the kubelet's nodes %v", node, c.env.Nodes)
	}
	if pw := d.PendingWorkers(); len(pw) != 0 {
		t.Errorf("pending after registration: %+v", pw)
	}
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

// TestRealAPIBlockedNodesKeptOutByScheduler: with two of the three nodes blocked, every pod
// carries the NotIn term naming them and the real scheduler places it on the third.
func TestRealAPIBlockedNodesKeptOutByScheduler(t *testing.T) {
	c := newRealCluster(t)
	if len(c.env.Nodes) < 3 {
		t.Fatalf("the harness has %d nodes, the test needs 3", len(c.env.Nodes))
	}
	blocked := c.env.Nodes[:2]
	free := c.env.Nodes[2]
	d := c.startDriver(t, "blocked", nil, blockedSet(blocked...))
	for _, id := range request(t, d, 3) {
		if node := c.waitRegistered(t, d, id); string(node) != free {
			t.Errorf("%s placed on %s, want %s (blocked: %v)", id, node, free, blocked)
		}
		p := c.pod(t, string(id))
		if got := excludedValues(p, corev1.LabelHostname); !reflect.DeepEqual(got, blocked) {
			t.Errorf("%s: NotIn values %v, want %v", id, got, blocked)
		}
	}
}

// TestRealAPIAllNodesBlockedUnschedulable: with every node blocked the scheduler cannot
// place the pod; it stays Pending with PodScheduled=False, reason Unschedulable, and the
// driver reports that reason and message as the pending worker's.
func TestRealAPIAllNodesBlockedUnschedulable(t *testing.T) {
	c := newRealCluster(t)
	d := c.startDriver(t, "noroom", nil, blockedSet(c.env.Nodes...))
	id := request(t, d, 1)[0]
	var pw []drivers.PendingWorker
	testkit.WaitFor(t, "the pod reported unschedulable", func() (bool, error) {
		pw = d.PendingWorkers()
		return len(pw) == 1 && pw[0].Reason == corev1.PodReasonUnschedulable, fmt.Errorf("pending workers %+v", pw)
	})
	if pw[0].ID != id || pw[0].State != "Requested" || pw[0].Node != "" || !strings.Contains(pw[0].Message, "didn't match Pod's node affinity/selector") {
		t.Fatalf("pending worker %+v, want %s Requested with the scheduler's node-affinity message", pw[0], id)
	}
	p := c.pod(t, string(id))
	if p.Status.Phase != corev1.PodPending || p.Spec.NodeName != "" {
		t.Fatalf("pod phase %s on %q, want Pending and unbound", p.Status.Phase, p.Spec.NodeName)
	}
	if !strings.Contains(c.log.String(), "cannot be scheduled") {
		t.Errorf("the driver's log lacks the unschedulable pod:\n%s", c.log.String())
	}
	if st := d.Status(); len(st) != 1 || st[0].Unschedulable != pw[0].Message {
		t.Errorf("Status() = %+v", st)
	}
}

// TestRealAPIKilledContainerIsLost: a TaskManager process that dies (SIGKILL, as a crash or
// the OOM killer) fails its pod; the driver reports the worker lost with the exit code and
// deletes the pod.
func TestRealAPIKilledContainerIsLost(t *testing.T) {
	c := newRealCluster(t)
	ev := newEvents()
	d := c.startDriver(t, "crash", ev, nil)
	id := request(t, d, 1)[0]
	c.waitRegistered(t, d, id)
	c.kill(t, id)
	reason := ev.waitLost(t, id)
	if !strings.Contains(reason, "exited with code 137") {
		t.Errorf("lost reason %q, want the exit code 137", reason)
	}
	c.waitPodGone(t, id, "the failed pod deleted")
}

// TestRealAPIExternalDeleteIsLost: someone deletes a TaskManager pod (kubectl delete, a
// drain); the kubelet stops it within the grace period and the driver reports it lost.
func TestRealAPIExternalDeleteIsLost(t *testing.T) {
	c := newRealCluster(t)
	ctx := ctxT(t)
	ev := newEvents()
	d := c.startDriver(t, "extdel", ev, nil)
	id := request(t, d, 1)[0]
	c.waitRegistered(t, d, id)
	pid, err := c.env.ContainerPID(c.ns, string(id), "")
	if err != nil {
		t.Fatal(err)
	}
	if err := c.cs.CoreV1().Pods(c.ns).Delete(ctx, string(id), metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	if reason := ev.waitLost(t, id); !strings.Contains(reason, "deleted") {
		t.Errorf("lost reason %q, want it to say deleted", reason)
	}
	c.waitPodGone(t, id, "the pod removed by the kubelet")
	testkit.WaitFor(t, "the TaskManager process gone", func() (bool, error) {
		_, err := os.Stat(fmt.Sprintf("/proc/%d", pid))
		return os.IsNotExist(err), err
	})
}

// TestRealAPIOwnerDeletedTakesPods: deleting the owner (the AM's pod on a real cluster)
// lets the garbage collector delete the TaskManager pods; the driver reports them lost.
func TestRealAPIOwnerDeletedTakesPods(t *testing.T) {
	c := newRealCluster(t)
	ctx := ctxT(t)
	ev := newEvents()
	d := c.startDriver(t, "owned", ev, nil)
	id := request(t, d, 1)[0]
	c.waitRegistered(t, d, id)
	bg := metav1.DeletePropagationBackground
	if err := c.cs.CoreV1().ConfigMaps(c.ns).Delete(ctx, c.owner.Name, metav1.DeleteOptions{PropagationPolicy: &bg}); err != nil {
		t.Fatal(err)
	}
	ev.waitLost(t, id)
	c.waitPodGone(t, id, "the owned pod removed")
}

// TestRealAPISecondDriverAdoptsRunningPods: an AM restart. Driver #2 with the same cluster
// id adopts the running pods of driver #1 (same processes), deletes a failed one, and names
// its own pods with the next attempt.
func TestRealAPISecondDriverAdoptsRunningPods(t *testing.T) {
	c := newRealCluster(t)
	ctx := ctxT(t)
	d1 := c.startDriver(t, "adopt", nil, nil)
	pids := map[core.TaskManagerID]int{}
	nodes := map[core.TaskManagerID]core.NodeID{}
	ids := request(t, d1, 3)
	for _, id := range ids {
		nodes[id] = c.waitRegistered(t, d1, id)
		pid, err := c.env.ContainerPID(c.ns, string(id), "")
		if err != nil {
			t.Fatal(err)
		}
		pids[id] = pid
	}
	if err := d1.Close(ctx); err != nil {
		t.Fatal(err)
	}
	// One TaskManager dies while no AM watches.
	dead := ids[2]
	c.kill(t, dead)
	testkit.WaitFor(t, "the killed pod Failed", func() (bool, error) {
		p, err := c.cs.CoreV1().Pods(c.ns).Get(ctx, string(dead), metav1.GetOptions{})
		return err == nil && p.Status.Phase == corev1.PodFailed, err
	})

	ev := newEvents()
	d2 := c.driver(t, "adopt")
	recovered, err := d2.Start(ctx, ev.handler(), nil)
	if err != nil {
		t.Fatal(err)
	}
	got := map[core.TaskManagerID]core.NodeID{}
	for _, w := range recovered {
		got[w.ID] = w.Node
	}
	want := map[core.TaskManagerID]core.NodeID{ids[0]: nodes[ids[0]], ids[1]: nodes[ids[1]]}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("recovered %v, want %v", got, want)
	}
	for id := range want {
		// The same process still runs: adoption does not restart TaskManagers.
		if pid, err := c.env.ContainerPID(c.ns, string(id), ""); err != nil || pid != pids[id] {
			t.Errorf("%s: pid %d after adoption, was %d (%v)", id, pid, pids[id], err)
		}
		if err := d2.Admit(ctx, drivers.Worker{ID: id, Node: want[id]}); err != nil {
			t.Errorf("the adopted %s registering: %v", id, err)
		}
	}
	c.waitPodGone(t, dead, "the failed pod of the previous attempt deleted")
	// The adopted pods serve driver #2's first requests (as the YARN driver's adopted
	// containers do): no pod is created for them.
	served := map[core.TaskManagerID]bool{}
	for _, id := range request(t, d2, len(want)) {
		if _, adopted := want[id]; !adopted || served[id] {
			t.Errorf("driver #2's request served by %s, want one of the adopted pods %v not served yet", id, want)
		}
		served[id] = true
	}
	// The next request creates a pod named after driver #2's attempt.
	id := request(t, d2, 1)[0]
	if id != "adopt-taskmanager-2-1" {
		t.Errorf("driver #2's first new pod %s, want adopt-taskmanager-2-1", id)
	}
	c.waitRegistered(t, d2, id)
}
