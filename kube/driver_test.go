package kube

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"reflect"
	"sort"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes/fake"

	"github.com/tidestream/tide/core"
	"github.com/tidestream/tide/drivers"
	"github.com/tidestream/tide/drivers/drivertest"
)

const testNS = "tide-test"

var testNodes = []string{"node-1", "node-2", "bad-node", "good-node"}

func ctxT(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	t.Cleanup(cancel)
	return ctx
}

// syncBuffer is a log sink safe for the driver's goroutines.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

func testPodSpec() PodSpec {
	return PodSpec{
		ClusterID: "wordcount", Image: "tide:test", PullPolicy: corev1.PullIfNotPresent, ServiceAccount: "tide",
		NodeNameLabel: "kubernetes.io/hostname", Command: []string{os.Args[0]}, ConfDir: "/opt/tide/conf",
		CPU: 1, MemoryMB: 256, AMHost: "10.0.0.7", AMPort: 6123, JobID: "job-1", AMRun: "run-1",
		Owner: &metav1.OwnerReference{APIVersion: "v1", Kind: "Pod", Name: "wordcount-am", UID: types.UID("am-uid"),
			Controller: ptrTo(true), BlockOwnerDeletion: ptrTo(true)},
		Env: map[string]string{envHelperTM: "1"},
	}
}

func ptrTo[T any](v T) *T { return &v }

func newTestDriver(t *testing.T, cs *fake.Clientset, log *syncBuffer) *Driver {
	t.Helper()
	lg := slog.Default()
	if log != nil {
		lg = slog.New(slog.NewTextHandler(log, nil))
	}
	d, err := NewDriver(DriverConfig{Client: cs, Namespace: testNS, Pod: testPodSpec(), Resync: 20 * time.Millisecond, Logger: lg})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = d.Close(context.Background()) })
	return d
}

// joinRunner plays "a requested pod comes up on w.Node and its TaskManager registers": the
// runner binds the pod (w.ID's if pending, else the oldest pending pod that may run there),
// runs its process and the TaskManager it reports registers (Admit). With no pod for that
// node (none pending, or the NotIn term excludes it), a TaskManager started there by hand
// registers.
func joinRunner(d *Driver, r *podRunner) func(ctx context.Context, w drivers.Worker) error {
	return func(ctx context.Context, w drivers.Worker) error {
		pods, err := r.pending(ctx, string(w.Node))
		if err != nil {
			return err
		}
		name := ""
		for _, p := range pods {
			if p.Name == string(w.ID) || name == "" {
				name = p.Name
			}
		}
		if name == "" {
			return d.Admit(ctx, w)
		}
		id, node, err := r.run(ctx, name, string(w.Node))
		if err != nil {
			return err
		}
		return d.Admit(ctx, drivers.Worker{ID: core.TaskManagerID(id), Node: core.NodeID(node)})
	}
}

func TestDriverConformance(t *testing.T) {
	drivertest.Suite(t, func(t *testing.T) drivertest.Harness {
		cs := fake.NewClientset()
		r := newPodRunner(t, cs, testNS, testNodes...)
		d := newTestDriver(t, cs, nil)
		return drivertest.Harness{Driver: d, Join: joinRunner(d, r)}
	})
}

// TestPodShape: the pod the driver builds, field by field.
func TestPodShape(t *testing.T) {
	s := testPodSpec()
	p, err := s.Build("wordcount-taskmanager-3-7", 3, []string{"node-b", "node-a"})
	if err != nil {
		t.Fatal(err)
	}
	wantLabels := map[string]string{LabelType: TypeValue, LabelApp: "wordcount", LabelComponent: ComponentTaskManager,
		LabelAttempt: "3", LabelJob: "job-1", LabelAMRun: "run-1"}
	if !reflect.DeepEqual(p.Labels, wantLabels) {
		t.Errorf("labels = %v, want %v", p.Labels, wantLabels)
	}
	if len(p.OwnerReferences) != 1 || p.OwnerReferences[0].UID != "am-uid" || !*p.OwnerReferences[0].Controller {
		t.Errorf("owner references = %+v, want the AM pod as controller", p.OwnerReferences)
	}
	if p.Spec.RestartPolicy != corev1.RestartPolicyNever {
		t.Errorf("restart policy = %s", p.Spec.RestartPolicy)
	}
	req := p.Spec.Affinity.NodeAffinity.RequiredDuringSchedulingIgnoredDuringExecution.NodeSelectorTerms
	want := []corev1.NodeSelectorTerm{{MatchExpressions: []corev1.NodeSelectorRequirement{{
		Key: "kubernetes.io/hostname", Operator: corev1.NodeSelectorOpNotIn, Values: []string{"node-a", "node-b"}}}}}
	if !reflect.DeepEqual(req, want) {
		t.Errorf("node selector terms = %+v, want %+v", req, want)
	}
	c := p.Spec.Containers[0]
	var nodeEnv *corev1.EnvVar
	for i := range c.Env {
		if c.Env[i].Name == EnvPodNodeID {
			nodeEnv = &c.Env[i]
		}
	}
	if nodeEnv == nil || nodeEnv.ValueFrom == nil || nodeEnv.ValueFrom.FieldRef.FieldPath != "spec.nodeName" {
		t.Errorf("env %s = %+v, want the downward API's spec.nodeName", EnvPodNodeID, nodeEnv)
	}
	args := strings.Join(c.Args, " ")
	for _, w := range []string{"taskmanager", "--resource-id wordcount-taskmanager-3-7", "-Dtaskmanager.node-id=$(" + EnvPodNodeID + ")",
		"-Djobmanager.rpc.address=10.0.0.7", "-Djobmanager.rpc.port=6123"} {
		if !strings.Contains(args, w) {
			t.Errorf("args %q lack %q", args, w)
		}
	}
	if got := c.Resources.Limits.Memory().Value(); got != 256<<20 {
		t.Errorf("memory limit = %d", got)
	}
	if p2, _ := s.Build("wordcount-taskmanager-3-8", 3, nil); p2.Spec.Affinity != nil {
		t.Errorf("with nothing blocked the pod has affinity %+v; want none (an empty NotIn is invalid)", p2.Spec.Affinity)
	}
}

func TestParsePodName(t *testing.T) {
	for _, tc := range []struct {
		name           string
		attempt, index int
		wantErr        bool
	}{
		{"wordcount-taskmanager-1-1", 1, 1, false},
		{"wordcount-taskmanager-12-340", 12, 340, false},
		{"other-taskmanager-1-1", 0, 0, true},
		{"wordcount-taskmanager-x-1", 0, 0, true},
		{"wordcount-jobmanager-1-1", 0, 0, true},
	} {
		a, i, err := ParsePodName("wordcount", tc.name)
		if (err != nil) != tc.wantErr || a != tc.attempt || i != tc.index {
			t.Errorf("ParsePodName(%q) = %d, %d, %v", tc.name, a, i, err)
		}
	}
}

func FuzzParsePodName(f *testing.F) {
	f.Add("wordcount-taskmanager-1-2")
	f.Add("wordcount-taskmanager--1-2")
	f.Fuzz(func(t *testing.T, name string) {
		a, i, err := ParsePodName("wordcount", name)
		if err == nil && podName("wordcount", a, i) != name && !strings.Contains(name, "-0") {
			// names with leading zeros parse to the same numbers; all others round-trip
			t.Errorf("%q parsed to %d, %d which names %q", name, a, i, podName("wordcount", a, i))
		}
	})
}

func TestCheckClusterID(t *testing.T) {
	for id, ok := range map[string]bool{"wordcount": true, "a-1": true, "": false, "Upper": false, "-x": false,
		strings.Repeat("a", 45): true, strings.Repeat("a", 46): false} {
		if err := CheckClusterID(id); (err == nil) != ok {
			t.Errorf("CheckClusterID(%q) = %v", id, err)
		}
	}
}

// waitPod waits until pod name satisfies cond.
func waitPod(t *testing.T, ctx context.Context, cs *fake.Clientset, name string, what string, cond func(*corev1.Pod) bool) *corev1.Pod {
	t.Helper()
	for {
		p, err := cs.CoreV1().Pods(testNS).Get(ctx, name, metav1.GetOptions{})
		if err == nil && cond(p) {
			return p
		}
		select {
		case <-ctx.Done():
			t.Fatalf("pod %s never %s (last: %v, %v)", name, what, p, err)
		case <-time.After(10 * time.Millisecond):
		}
	}
}

// TestNewPodsKeptOffBlockedNodes: a pod created after a block carries NotIn with the
// blocked nodes' label values, sorted.
func TestNewPodsKeptOffBlockedNodes(t *testing.T) {
	ctx := ctxT(t)
	cs := fake.NewClientset()
	newPodRunner(t, cs, testNS, testNodes...)
	d := newTestDriver(t, cs, nil)
	var mu sync.Mutex
	blocked := map[core.NodeID]bool{}
	if _, err := d.Start(ctx, drivertest.NewRecorder(), func(n core.NodeID) bool { mu.Lock(); defer mu.Unlock(); return blocked[n] }); err != nil {
		t.Fatal(err)
	}
	first, err := d.RequestWorker(ctx, drivers.WorkerSpec{Slots: 1})
	if err != nil {
		t.Fatal(err)
	}
	if p := waitPod(t, ctx, cs, string(first), "created", func(*corev1.Pod) bool { return true }); p.Spec.Affinity != nil {
		t.Fatalf("pod before any block has affinity %+v", p.Spec.Affinity)
	}
	mu.Lock()
	blocked["node-2"], blocked["bad-node"] = true, true
	mu.Unlock()
	second, err := d.RequestWorker(ctx, drivers.WorkerSpec{Slots: 1})
	if err != nil {
		t.Fatal(err)
	}
	p := waitPod(t, ctx, cs, string(second), "created", func(*corev1.Pod) bool { return true })
	if got := excludedValues(p, "kubernetes.io/hostname"); !reflect.DeepEqual(got, []string{"bad-node", "node-2"}) {
		t.Fatalf("NotIn values = %v, want [bad-node node-2]", got)
	}
}

// TestPendingPodOnBlockedNodeRecreated: a pod bound to a node that gets blocked before its
// TaskManager registers is deleted and created again, same name, with the node in NotIn.
func TestPendingPodOnBlockedNodeRecreated(t *testing.T) {
	ctx := ctxT(t)
	cs := fake.NewClientset()
	r := newPodRunner(t, cs, testNS, testNodes...)
	log := &syncBuffer{}
	d := newTestDriver(t, cs, log)
	var mu sync.Mutex
	blocked := map[core.NodeID]bool{}
	rec := drivertest.NewRecorder()
	if _, err := d.Start(ctx, rec, func(n core.NodeID) bool { mu.Lock(); defer mu.Unlock(); return blocked[n] }); err != nil {
		t.Fatal(err)
	}
	id, err := d.RequestWorker(ctx, drivers.WorkerSpec{Slots: 1})
	if err != nil {
		t.Fatal(err)
	}
	waitPod(t, ctx, cs, string(id), "created", func(*corev1.Pod) bool { return true })
	if err := r.schedule(ctx, string(id), "node-1"); err != nil {
		t.Fatal(err)
	}
	waitPod(t, ctx, cs, string(id), "bound", func(p *corev1.Pod) bool { return p.Spec.NodeName == "node-1" })
	mu.Lock()
	blocked["node-1"] = true
	mu.Unlock()
	p := waitPod(t, ctx, cs, string(id), "re-created off node-1", func(p *corev1.Pod) bool {
		return p.Spec.NodeName == "" && reflect.DeepEqual(excludedValues(p, "kubernetes.io/hostname"), []string{"node-1"})
	})
	if err := r.schedule(ctx, p.Name, "node-1"); err == nil {
		t.Fatal("the re-created pod may still run on node-1")
	}
	host, node, err := r.run(ctx, p.Name, "node-2")
	if err != nil {
		t.Fatal(err)
	}
	if err := d.Admit(ctx, drivers.Worker{ID: core.TaskManagerID(host), Node: core.NodeID(node)}); err != nil {
		t.Fatalf("Admit of the re-created pod's TaskManager on node-2: %v", err)
	}
	if got := rec.Terminated(); len(got) != 0 {
		t.Fatalf("re-creating the pod reported %v terminated", got)
	}
	if st := d.Status(); len(st) != 1 || st[0].Recreated != 1 || !st[0].Registered || st[0].Node != "node-2" {
		t.Fatalf("Status() = %+v, want one registered pod on node-2, re-created once", st)
	}
	if !strings.Contains(log.String(), "creating it again") {
		t.Errorf("log does not say the pod is created again:\n%s", log.String())
	}
}

// TestLostPodsReportedAtOnce: a TaskManager pod whose process dies, that is deleted, or that
// is evicted is reported lost, with why.
func TestLostPodsReportedAtOnce(t *testing.T) {
	for _, tc := range []struct {
		name string
		lose func(ctx context.Context, cs *fake.Clientset, r *podRunner, pod string) error
		want string
	}{
		{"process killed", func(_ context.Context, _ *fake.Clientset, r *podRunner, pod string) error {
			return r.signal(pod, syscall.SIGKILL)
		}, "exited with code 137"},
		{"pod deleted", func(ctx context.Context, cs *fake.Clientset, _ *podRunner, pod string) error {
			return cs.CoreV1().Pods(testNS).Delete(ctx, pod, metav1.DeleteOptions{})
		}, "phase Running"},
		{"pod evicted", func(ctx context.Context, _ *fake.Clientset, r *podRunner, pod string) error {
			return r.setStatus(ctx, pod, func(st *corev1.PodStatus) {
				st.Phase, st.Reason, st.Message = corev1.PodFailed, "Evicted", "The node was low on resource: memory."
			})
		}, "reason Evicted"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ctx := ctxT(t)
			cs := fake.NewClientset()
			r := newPodRunner(t, cs, testNS, testNodes...)
			d := newTestDriver(t, cs, nil)
			var mu sync.Mutex
			reasons := map[core.TaskManagerID]string{}
			lost := make(chan core.TaskManagerID, 4)
			h := drivers.EventFuncs{WorkerTerminated: func(id core.TaskManagerID, reason string) {
				mu.Lock()
				reasons[id] = reason
				mu.Unlock()
				lost <- id
			}}
			if _, err := d.Start(ctx, h, nil); err != nil {
				t.Fatal(err)
			}
			id, err := d.RequestWorker(ctx, drivers.WorkerSpec{Slots: 1})
			if err != nil {
				t.Fatal(err)
			}
			if err := joinRunner(d, r)(ctx, drivers.Worker{ID: id, Node: "node-1"}); err != nil {
				t.Fatal(err)
			}
			if err := tc.lose(ctx, cs, r, string(id)); err != nil {
				t.Fatal(err)
			}
			select {
			case got := <-lost:
				mu.Lock()
				reason := reasons[got]
				mu.Unlock()
				if got != id || !strings.Contains(reason, tc.want) {
					t.Fatalf("lost %s (%q), want %s with %q", got, reason, id, tc.want)
				}
			case <-ctx.Done():
				t.Fatalf("pod %s never reported lost", id)
			}
			if err := d.ReleaseWorker(ctx, id); !errors.Is(err, drivers.ErrUnknownWorker) {
				t.Fatalf("ReleaseWorker of a lost worker = %v, want ErrUnknownWorker", err)
			}
			// Its TaskManager, still up for its grace period, registers again: refused.
			if err := d.Admit(ctx, drivers.Worker{ID: id, Node: "node-1"}); !errors.Is(err, drivers.ErrUnknownWorker) {
				t.Fatalf("Admit of a lost pod's TaskManager = %v, want ErrUnknownWorker", err)
			}
		})
	}
}

// TestAdoptionAfterAMRestart: a new driver adopts the scheduled, live pods of the cluster,
// deletes the terminated and never-scheduled ones, ignores other clusters' pods and names
// new pods with the next attempt.
func TestAdoptionAfterAMRestart(t *testing.T) {
	ctx := ctxT(t)
	s := testPodSpec()
	mk := func(name string, node string, phase corev1.PodPhase, cluster string) *corev1.Pod {
		ps := s
		ps.ClusterID = cluster
		p, err := ps.Build(name, 1, nil)
		if err != nil {
			t.Fatal(err)
		}
		p.Namespace = testNS
		p.Spec.NodeName = node
		p.Status.Phase = phase
		return p
	}
	cs := fake.NewClientset(
		mk("wordcount-taskmanager-1-1", "node-1", corev1.PodRunning, "wordcount"),
		mk("wordcount-taskmanager-2-4", "node-2", corev1.PodRunning, "wordcount"),
		mk("wordcount-taskmanager-2-5", "", corev1.PodPending, "wordcount"),
		mk("wordcount-taskmanager-2-6", "node-1", corev1.PodFailed, "wordcount"),
		mk("other-taskmanager-9-1", "node-1", corev1.PodRunning, "other"),
	)
	d := newTestDriver(t, cs, nil)
	ws, err := d.Start(ctx, drivertest.NewRecorder(), nil)
	if err != nil {
		t.Fatal(err)
	}
	want := []drivers.Worker{{ID: "wordcount-taskmanager-1-1", Node: "node-1"}, {ID: "wordcount-taskmanager-2-4", Node: "node-2"}}
	if !reflect.DeepEqual(ws, want) {
		t.Fatalf("recovered %v, want %v", ws, want)
	}
	l, err := cs.CoreV1().Pods(testNS).List(ctx, metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	var left []string
	for _, p := range l.Items {
		left = append(left, p.Name)
	}
	sort.Strings(left)
	if fmt.Sprint(left) != "[other-taskmanager-9-1 wordcount-taskmanager-1-1 wordcount-taskmanager-2-4]" {
		t.Fatalf("pods left after recovery: %v", left)
	}
	// The adopted pods serve the first requests (the core does not count them), a new pod the next.
	for _, want := range []string{"wordcount-taskmanager-1-1", "wordcount-taskmanager-2-4", "wordcount-taskmanager-3-1"} {
		id, err := d.RequestWorker(ctx, drivers.WorkerSpec{Slots: 1})
		if err != nil {
			t.Fatal(err)
		}
		if string(id) != want {
			t.Fatalf("request served by %s, want %s", id, want)
		}
	}
	if err := d.Admit(ctx, drivers.Worker{ID: "wordcount-taskmanager-2-4", Node: "node-2"}); err != nil {
		t.Fatalf("the adopted TaskManager registering again: %v", err)
	}
}

// TestUnschedulableReasonLogged: the scheduler's reason for not placing a pod is logged and
// shown in Status.
func TestUnschedulableReasonLogged(t *testing.T) {
	ctx := ctxT(t)
	cs := fake.NewClientset()
	r := newPodRunner(t, cs, testNS, testNodes...)
	log := &syncBuffer{}
	d := newTestDriver(t, cs, log)
	if _, err := d.Start(ctx, drivertest.NewRecorder(), nil); err != nil {
		t.Fatal(err)
	}
	id, err := d.RequestWorker(ctx, drivers.WorkerSpec{Slots: 1})
	if err != nil {
		t.Fatal(err)
	}
	const msg = "0/4 nodes are available: 4 node(s) didn't match Pod's node affinity/selector."
	waitPod(t, ctx, cs, string(id), "created", func(*corev1.Pod) bool { return true })
	if err := r.setStatus(ctx, string(id), func(st *corev1.PodStatus) {
		st.Conditions = []corev1.PodCondition{{Type: corev1.PodScheduled, Status: corev1.ConditionFalse, Reason: corev1.PodReasonUnschedulable, Message: msg}}
	}); err != nil {
		t.Fatal(err)
	}
	for ctx.Err() == nil && !strings.Contains(log.String(), "cannot be scheduled") {
		time.Sleep(10 * time.Millisecond)
	}
	if !strings.Contains(log.String(), "didn't match Pod's node affinity") {
		t.Fatalf("log lacks the scheduler's reason:\n%s", log.String())
	}
	if st := d.Status(); len(st) != 1 || st[0].Unschedulable != msg {
		t.Fatalf("Status() = %+v, want the reason", st)
	}
	pw := d.PendingWorkers()
	if len(pw) != 1 || pw[0].ID != id || pw[0].State != "Requested" || pw[0].Reason != corev1.PodReasonUnschedulable || pw[0].Message != msg || pw[0].Since.IsZero() {
		t.Fatalf("PendingWorkers() = %+v, want %s Requested/Unschedulable with the message", pw, id)
	}
	// Placed and running, the pod is still pending until its TaskManager registers; then
	// it is no longer listed.
	if _, _, err := r.run(ctx, string(id), "node-1"); err != nil {
		t.Fatal(err)
	}
	for ctx.Err() == nil {
		if pw = d.PendingWorkers(); len(pw) == 1 && pw[0].State == "Running" && pw[0].Reason == "" && pw[0].Node == "node-1" {
			break
		}
		time.Sleep(10 * time.Millisecond)
	}
	if len(pw) != 1 || pw[0].State != "Running" {
		t.Fatalf("PendingWorkers() = %+v once running, want Running on node-1", pw)
	}
	if err := d.Admit(ctx, drivers.Worker{ID: id, Node: "node-1"}); err != nil {
		t.Fatal(err)
	}
	if pw := d.PendingWorkers(); len(pw) != 0 {
		t.Fatalf("PendingWorkers() = %+v after registration, want none", pw)
	}
}

// TestDeregisterDeletesPods: the application is over, its TaskManager pods go; other
// clusters' pods stay.
func TestDeregisterDeletesPods(t *testing.T) {
	ctx := ctxT(t)
	other := testPodSpec()
	other.ClusterID = "other"
	op, err := other.Build("other-taskmanager-1-1", 1, nil)
	if err != nil {
		t.Fatal(err)
	}
	op.Namespace = testNS
	cs := fake.NewClientset(op)
	d := newTestDriver(t, cs, nil)
	if _, err := d.Start(ctx, drivertest.NewRecorder(), nil); err != nil {
		t.Fatal(err)
	}
	for range 2 {
		if _, err := d.RequestWorker(ctx, drivers.WorkerSpec{Slots: 1}); err != nil {
			t.Fatal(err)
		}
	}
	if err := d.Deregister(ctx, drivers.StatusSucceeded, "done"); err != nil {
		t.Fatal(err)
	}
	l, err := cs.CoreV1().Pods(testNS).List(ctx, metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if len(l.Items) != 1 || l.Items[0].Name != "other-taskmanager-1-1" {
		t.Fatalf("pods after Deregister: %v", l.Items)
	}
}
