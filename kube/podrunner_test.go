package kube

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"
	"os/signal"
	"regexp"
	"sort"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/kubernetes/fake"
	"k8s.io/client-go/util/retry"
)

// podRunner plays the scheduler and kubelet for tests on the fake clientset: it registers
// nodes labelled kubernetes.io/hostname=<name>, binds a pod to a node when the test says so
// (refusing nodes the pod's NotIn term excludes), runs the pod's command as a local process
// with the pod's environment and downward-API values, reports its exit as the pod's phase
// and stops the process when the pod is deleted (SIGTERM, then SIGKILL).
type podRunner struct {
	t     *testing.T
	cs    *fake.Clientset
	ns    string
	mu    sync.Mutex
	procs map[string]*proc
	nodes map[string]map[string]string
	wg    sync.WaitGroup
}

func newPodRunner(t *testing.T, cs *fake.Clientset, ns string, nodes ...string) *podRunner {
	r := &podRunner{t: t, cs: cs, ns: ns, procs: map[string]*proc{}, nodes: map[string]map[string]string{}}
	for _, n := range nodes {
		lbl := map[string]string{"kubernetes.io/hostname": n}
		r.nodes[n] = lbl
		if _, err := cs.CoreV1().Nodes().Create(context.Background(), &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: n, Labels: lbl}}, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	w, err := cs.CoreV1().Pods(ns).Watch(context.Background(), metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	r.wg.Add(1)
	go func() {
		defer r.wg.Done()
		for ev := range w.ResultChan() {
			if p, ok := ev.Object.(*corev1.Pod); ok && ev.Type == watch.Deleted {
				r.stop(p.Name)
			}
		}
	}()
	t.Cleanup(func() {
		w.Stop()
		r.mu.Lock()
		names := make([]string, 0, len(r.procs))
		for n := range r.procs {
			names = append(names, n)
		}
		r.mu.Unlock()
		for _, n := range names {
			r.stop(n)
		}
		r.wg.Wait()
	})
	return r
}

// proc is a pod's process; done closes once it was waited for.
type proc struct {
	cmd  *exec.Cmd
	done chan struct{}
}

// stop ends the process of pod name: SIGTERM, SIGKILL after 5 s.
func (r *podRunner) stop(name string) {
	r.mu.Lock()
	p := r.procs[name]
	delete(r.procs, name)
	r.mu.Unlock()
	if p == nil {
		return
	}
	_ = p.cmd.Process.Signal(syscall.SIGTERM)
	t := time.AfterFunc(5*time.Second, func() { _ = p.cmd.Process.Kill() })
	defer t.Stop()
	<-p.done
}

// signal sends sig to pod name's process (a TaskManager crashing or being OOM-killed).
func (r *podRunner) signal(name string, sig syscall.Signal) error {
	r.mu.Lock()
	p := r.procs[name]
	r.mu.Unlock()
	if p == nil {
		return fmt.Errorf("pod %s runs no process", name)
	}
	return p.cmd.Process.Signal(sig)
}

// allows reports whether pod p's node affinity lets it run on node (NotIn terms only,
// which is all the driver writes; a node without the label passes NotIn, as in Kubernetes).
func (r *podRunner) allows(p *corev1.Pod, node string) bool {
	a := p.Spec.Affinity
	if a == nil || a.NodeAffinity == nil || a.NodeAffinity.RequiredDuringSchedulingIgnoredDuringExecution == nil {
		return true
	}
	for _, term := range a.NodeAffinity.RequiredDuringSchedulingIgnoredDuringExecution.NodeSelectorTerms {
		ok := true
		for _, req := range term.MatchExpressions {
			v, has := r.nodes[node][req.Key]
			if req.Operator == corev1.NodeSelectorOpNotIn && has {
				for _, x := range req.Values {
					if x == v {
						ok = false
					}
				}
			}
		}
		if ok {
			return true
		}
	}
	return false
}

// pending returns the unbound pods that may run on node, oldest name first.
func (r *podRunner) pending(ctx context.Context, node string) ([]corev1.Pod, error) {
	l, err := r.cs.CoreV1().Pods(r.ns).List(ctx, metav1.ListOptions{})
	if err != nil {
		return nil, err
	}
	var out []corev1.Pod
	for _, p := range l.Items {
		if p.Spec.NodeName == "" && p.DeletionTimestamp == nil && r.allows(&p, node) {
			out = append(out, p)
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out, nil
}

// schedule binds pod name to node (as kube-scheduler would) without running it.
func (r *podRunner) schedule(ctx context.Context, name, node string) error {
	return retry.RetryOnConflict(retry.DefaultRetry, func() error {
		p, err := r.cs.CoreV1().Pods(r.ns).Get(ctx, name, metav1.GetOptions{})
		if err != nil {
			return err
		}
		if !r.allows(p, node) {
			return fmt.Errorf("pod %s may not run on node %s (node affinity)", name, node)
		}
		p.Spec.NodeName = node
		p.Status.Phase = corev1.PodPending
		p.Status.Conditions = []corev1.PodCondition{{Type: corev1.PodScheduled, Status: corev1.ConditionTrue}}
		_, err = r.cs.CoreV1().Pods(r.ns).Update(ctx, p, metav1.UpdateOptions{})
		return err
	})
}

var envRef = regexp.MustCompile(`\$\(([A-Za-z_][A-Za-z0-9_]*)\)`)

// run binds pod name to node and starts its container's command; it returns the
// TaskManager id and node the process reports once it is up.
func (r *podRunner) run(ctx context.Context, name, node string) (string, string, error) {
	if err := r.schedule(ctx, name, node); err != nil {
		return "", "", err
	}
	p, err := r.cs.CoreV1().Pods(r.ns).Get(ctx, name, metav1.GetOptions{})
	if err != nil {
		return "", "", err
	}
	c := p.Spec.Containers[0]
	env := map[string]string{}
	for _, e := range c.Env {
		switch {
		case e.ValueFrom == nil:
			env[e.Name] = e.Value
		case e.ValueFrom.FieldRef != nil && e.ValueFrom.FieldRef.FieldPath == "spec.nodeName":
			env[e.Name] = node
		case e.ValueFrom.FieldRef != nil && e.ValueFrom.FieldRef.FieldPath == "status.podIP":
			env[e.Name] = "127.0.0.1"
		case e.ValueFrom.FieldRef != nil && e.ValueFrom.FieldRef.FieldPath == "metadata.name":
			env[e.Name] = p.Name
		default:
			return "", "", fmt.Errorf("pod %s: env %s has an unsupported source", name, e.Name)
		}
	}
	expand := func(s string) string {
		return envRef.ReplaceAllStringFunc(s, func(m string) string {
			if v, ok := env[m[2:len(m)-1]]; ok {
				return v
			}
			return m
		})
	}
	argv := append([]string(nil), c.Command...)
	argv = append(argv, c.Args...)
	for i := range argv {
		argv[i] = expand(argv[i])
	}
	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.Env = os.Environ()
	for k, v := range env {
		cmd.Env = append(cmd.Env, k+"="+v)
	}
	out, err := cmd.StdoutPipe()
	if err != nil {
		return "", "", err
	}
	cmd.Stderr = os.Stderr
	if err := cmd.Start(); err != nil {
		return "", "", fmt.Errorf("pod %s: starting %v: %w", name, argv, err)
	}
	pr := &proc{cmd: cmd, done: make(chan struct{})}
	r.mu.Lock()
	r.procs[name] = pr
	r.mu.Unlock()
	if err := r.setStatus(ctx, name, func(st *corev1.PodStatus) {
		st.Phase, st.PodIP = corev1.PodRunning, "127.0.0.1"
		st.ContainerStatuses = []corev1.ContainerStatus{{Name: c.Name, Ready: true, State: corev1.ContainerState{Running: &corev1.ContainerStateRunning{}}}}
	}); err != nil {
		_ = cmd.Process.Kill()
		_, _ = io.Copy(io.Discard, out)
		_ = cmd.Wait()
		close(pr.done)
		return "", "", err
	}
	line, err := bufio.NewReader(out).ReadString('\n')
	if err != nil {
		_ = cmd.Wait()
		close(pr.done)
		return "", "", fmt.Errorf("pod %s: its process said nothing: %w", name, err)
	}
	f := strings.Fields(line)
	if len(f) != 3 || f[0] != "registered" {
		return "", "", fmt.Errorf("pod %s: unexpected first line %q", name, line)
	}
	r.wg.Add(1)
	go func() {
		defer r.wg.Done()
		_ = cmd.Wait()
		close(pr.done)
		r.mu.Lock()
		stopped := r.procs[name] != pr // deleted: the pod is gone or going
		delete(r.procs, name)
		r.mu.Unlock()
		if stopped {
			return
		}
		code := int32(cmd.ProcessState.ExitCode())
		if ws, ok := cmd.ProcessState.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
			code = 128 + int32(ws.Signal())
		}
		_ = r.setStatus(context.Background(), name, func(st *corev1.PodStatus) {
			st.Phase = corev1.PodFailed
			if code == 0 {
				st.Phase = corev1.PodSucceeded
			}
			st.ContainerStatuses = []corev1.ContainerStatus{{Name: c.Name, State: corev1.ContainerState{
				Terminated: &corev1.ContainerStateTerminated{ExitCode: code, Reason: "Error"}}}}
		})
	}()
	return f[1], f[2], nil
}

func (r *podRunner) setStatus(ctx context.Context, name string, f func(*corev1.PodStatus)) error {
	return retry.RetryOnConflict(retry.DefaultRetry, func() error {
		p, err := r.cs.CoreV1().Pods(r.ns).Get(ctx, name, metav1.GetOptions{})
		if apierrors.IsNotFound(err) {
			return nil
		}
		if err != nil {
			return err
		}
		f(&p.Status)
		_, err = r.cs.CoreV1().Pods(r.ns).UpdateStatus(ctx, p, metav1.UpdateOptions{})
		return err
	})
}

// The test binary doubles as the TaskManager a pod runs: with envHelperTM set it prints
// "registered <resource-id> <node-id>" from its arguments and waits to be stopped.
const envHelperTM = "TIDE_KUBE_TEST_TASKMANAGER"

func TestMain(m *testing.M) {
	if os.Getenv(envHelperTM) == "1" {
		helperTaskManager(os.Args[1:])
		return
	}
	os.Exit(m.Run())
}

func helperTaskManager(args []string) {
	var id, node string
	for i, a := range args {
		if a == "--resource-id" && i+1 < len(args) {
			id = args[i+1]
		}
		if v, ok := strings.CutPrefix(a, "-Dtaskmanager.node-id="); ok {
			node = v
		}
	}
	if id == "" || node == "" || strings.Contains(node, "$(") {
		fmt.Fprintf(os.Stderr, "test TaskManager: no resource id or node id in %q\n", args)
		os.Exit(2)
	}
	fmt.Printf("registered %s %s\n", id, node)
	sig := make(chan os.Signal, 1)
	signal.Notify(sig, syscall.SIGTERM, syscall.SIGINT)
	<-sig
	os.Exit(143)
}
