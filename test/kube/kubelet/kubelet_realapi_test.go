package kubelet_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"

	"github.com/tidestream/tide/internal/testkit"
	"github.com/tidestream/tide/test/kube/kubetest"
)

// These tests run the process kubelet of `make k8s-up` through the real API server and
// scheduler: what a pod's process sees, what the pod's status says, deletion and restarts.

func shPod(name string, script string, policy corev1.RestartPolicy) *corev1.Pod {
	grace := int64(5)
	return &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: name, Labels: map[string]string{"app": name}},
		Spec: corev1.PodSpec{
			RestartPolicy:                 policy,
			TerminationGracePeriodSeconds: &grace,
			Containers: []corev1.Container{{
				Name: "main", Image: "busybox", Command: []string{"/bin/sh", "-c", script},
			}},
		},
	}
}

func create(t *testing.T, cs kubernetes.Interface, ns string, p *corev1.Pod) *corev1.Pod {
	t.Helper()
	got, err := cs.CoreV1().Pods(ns).Create(context.Background(), p, metav1.CreateOptions{})
	if err != nil {
		t.Fatalf("creating pod %s: %v", p.Name, err)
	}
	return got
}

// waitPod waits until cond holds for pod ns/name and returns it.
func waitPod(t *testing.T, cs kubernetes.Interface, ns, name, what string, cond func(*corev1.Pod) bool) *corev1.Pod {
	t.Helper()
	var p *corev1.Pod
	testkit.WaitFor(t, fmt.Sprintf("pod %s/%s %s", ns, name, what), func() (bool, error) {
		var err error
		p, err = cs.CoreV1().Pods(ns).Get(context.Background(), name, metav1.GetOptions{})
		if err != nil {
			return false, err
		}
		if cond(p) {
			return true, nil
		}
		return false, fmt.Errorf("phase %s, conditions %v, containers %v", p.Status.Phase, p.Status.Conditions, p.Status.ContainerStatuses)
	})
	return p
}

func running(p *corev1.Pod) bool { return p.Status.Phase == corev1.PodRunning }

// waitFile waits until file holds want (as a substring) and returns its content.
func waitFile(t *testing.T, file, want string) string {
	t.Helper()
	var s string
	testkit.WaitFor(t, fmt.Sprintf("%s to hold %q", file, want), func() (bool, error) {
		b, err := os.ReadFile(file)
		s = string(b)
		return strings.Contains(s, want), err
	})
	return s
}

func TestNodesRegistered(t *testing.T) {
	env := kubetest.Load(t)
	cs := env.Client(t)
	for _, n := range env.Nodes {
		node, err := cs.CoreV1().Nodes().Get(context.Background(), n, metav1.GetOptions{})
		if err != nil {
			t.Fatalf("node %s: %v", n, err)
		}
		if node.Labels[corev1.LabelHostname] != n {
			t.Errorf("node %s: label %s = %q", n, corev1.LabelHostname, node.Labels[corev1.LabelHostname])
		}
		ready := false
		for _, c := range node.Status.Conditions {
			ready = ready || (c.Type == corev1.NodeReady && c.Status == corev1.ConditionTrue)
		}
		if !ready || len(node.Spec.Taints) != 0 {
			t.Errorf("node %s: ready %v, taints %v", n, ready, node.Spec.Taints)
		}
		if q := node.Status.Allocatable[corev1.ResourcePods]; q.Value() < 10 {
			t.Errorf("node %s: allocatable pods %v", n, q.String())
		}
	}
}

func TestPodSeesEnvDownwardAPIAndVolumes(t *testing.T) {
	env := kubetest.Load(t)
	cs := env.Client(t)
	ns := env.Namespace(t)
	ctx := context.Background()
	if _, err := cs.CoreV1().ConfigMaps(ns).Create(ctx, &corev1.ConfigMap{
		ObjectMeta: metav1.ObjectMeta{Name: "conf"}, Data: map[string]string{"flink-conf.yaml": "a: 1\n", "greeting": "hello"},
	}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, err := cs.CoreV1().Secrets(ns).Create(ctx, &corev1.Secret{
		ObjectMeta: metav1.ObjectMeta{Name: "sec"}, Data: map[string][]byte{"password": []byte("s3cret")},
	}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	p := shPod("envs", `echo "node=$NODE pod=$POD ns=$NS ip=$IP cpu=$CPU mem=$MEM greeting=$GREETING pw=$PW arg=$1 conf=$CONF_DIR"
cat "$CONF_DIR/flink-conf.yaml"; cat /etc/sec/password; echo; echo done; exec sleep 600`, corev1.RestartPolicyNever)
	c := &p.Spec.Containers[0]
	c.Args = []string{"sh", "$(POD)-arg"} // $0 and $1 of the script, $(POD) expanded by the kubelet
	c.Resources.Requests = corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("1500m"), corev1.ResourceMemory: resource.MustParse("64Mi")}
	c.Env = []corev1.EnvVar{
		{Name: "NODE", ValueFrom: &corev1.EnvVarSource{FieldRef: &corev1.ObjectFieldSelector{FieldPath: "spec.nodeName"}}},
		{Name: "POD", ValueFrom: &corev1.EnvVarSource{FieldRef: &corev1.ObjectFieldSelector{FieldPath: "metadata.name"}}},
		{Name: "NS", ValueFrom: &corev1.EnvVarSource{FieldRef: &corev1.ObjectFieldSelector{FieldPath: "metadata.namespace"}}},
		{Name: "IP", ValueFrom: &corev1.EnvVarSource{FieldRef: &corev1.ObjectFieldSelector{FieldPath: "status.podIP"}}},
		{Name: "CPU", ValueFrom: &corev1.EnvVarSource{ResourceFieldRef: &corev1.ResourceFieldSelector{Resource: "requests.cpu"}}},
		{Name: "MEM", ValueFrom: &corev1.EnvVarSource{ResourceFieldRef: &corev1.ResourceFieldSelector{Resource: "requests.memory", Divisor: resource.MustParse("1Mi")}}},
		{Name: "GREETING", ValueFrom: &corev1.EnvVarSource{ConfigMapKeyRef: &corev1.ConfigMapKeySelector{LocalObjectReference: corev1.LocalObjectReference{Name: "conf"}, Key: "greeting"}}},
		{Name: "PW", ValueFrom: &corev1.EnvVarSource{SecretKeyRef: &corev1.SecretKeySelector{LocalObjectReference: corev1.LocalObjectReference{Name: "sec"}, Key: "password"}}},
		{Name: "CONF_DIR", Value: "/opt/tide/conf"},
	}
	c.VolumeMounts = []corev1.VolumeMount{{Name: "conf", MountPath: "/opt/tide/conf"}, {Name: "sec", MountPath: "/etc/sec"}}
	p.Spec.Volumes = []corev1.Volume{
		{Name: "conf", VolumeSource: corev1.VolumeSource{ConfigMap: &corev1.ConfigMapVolumeSource{LocalObjectReference: corev1.LocalObjectReference{Name: "conf"}}}},
		{Name: "sec", VolumeSource: corev1.VolumeSource{Secret: &corev1.SecretVolumeSource{SecretName: "sec"}}},
	}
	create(t, cs, ns, p)
	got := waitPod(t, cs, ns, "envs", "Running", running)
	node := got.Spec.NodeName
	if got.Status.PodIP != "127.0.0.1" || len(got.Status.ContainerStatuses) != 1 || got.Status.ContainerStatuses[0].State.Running == nil {
		t.Fatalf("status %+v", got.Status)
	}
	confDir := filepath.Join(env.PodDir(ns, "envs"), "volumes", "conf")
	out := waitFile(t, env.PodLog(ns, "envs", "main"), "done")
	want := fmt.Sprintf("node=%s pod=envs ns=%s ip=127.0.0.1 cpu=2 mem=64 greeting=hello pw=s3cret arg=envs-arg conf=%s\na: 1\ns3cret\ndone\n", node, ns, confDir)
	if out != want {
		t.Fatalf("the pod's output:\n%s\nwant:\n%s", out, want)
	}
	// A ConfigMap edit reaches the volume by the kubelet's ..data swap.
	before, err := os.Readlink(filepath.Join(confDir, "..data"))
	if err != nil {
		t.Fatal(err)
	}
	cm, err := cs.CoreV1().ConfigMaps(ns).Get(ctx, "conf", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	cm.Data["flink-conf.yaml"] = "a: 2\n"
	if _, err := cs.CoreV1().ConfigMaps(ns).Update(ctx, cm, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	waitFile(t, filepath.Join(confDir, "flink-conf.yaml"), "a: 2")
	after, err := os.Readlink(filepath.Join(confDir, "..data"))
	if err != nil || after == before {
		t.Fatalf("..data -> %q after the edit (before %q): %v", after, before, err)
	}
	if l, err := os.Readlink(filepath.Join(confDir, "flink-conf.yaml")); err != nil || l != "..data/flink-conf.yaml" {
		t.Fatalf("flink-conf.yaml -> %q, %v", l, err)
	}
}

func TestPodExitCodes(t *testing.T) {
	env := kubetest.Load(t)
	cs := env.Client(t)
	ns := env.Namespace(t)
	create(t, cs, ns, shPod("ok", "echo fine", corev1.RestartPolicyNever))
	create(t, cs, ns, shPod("bad", "echo broken >&2; exit 3", corev1.RestartPolicyNever))
	ok := waitPod(t, cs, ns, "ok", "Succeeded", func(p *corev1.Pod) bool { return p.Status.Phase == corev1.PodSucceeded })
	if term := ok.Status.ContainerStatuses[0].State.Terminated; term == nil || term.ExitCode != 0 || term.Reason != "Completed" {
		t.Fatalf("ok: %+v", ok.Status.ContainerStatuses[0].State)
	}
	bad := waitPod(t, cs, ns, "bad", "Failed", func(p *corev1.Pod) bool { return p.Status.Phase == corev1.PodFailed })
	if term := bad.Status.ContainerStatuses[0].State.Terminated; term == nil || term.ExitCode != 3 || term.Reason != "Error" {
		t.Fatalf("bad: %+v", bad.Status.ContainerStatuses[0].State)
	}
	waitFile(t, env.PodLog(ns, "bad", "main"), "broken")
}

func TestKillContainerFailsPod(t *testing.T) {
	env := kubetest.Load(t)
	cs := env.Client(t)
	ns := env.Namespace(t)
	create(t, cs, ns, shPod("victim", "exec sleep 600", corev1.RestartPolicyNever))
	waitPod(t, cs, ns, "victim", "Running", running)
	if err := env.KillContainer(ns, "victim"); err != nil {
		t.Fatal(err)
	}
	p := waitPod(t, cs, ns, "victim", "Failed", func(p *corev1.Pod) bool { return p.Status.Phase == corev1.PodFailed })
	if term := p.Status.ContainerStatuses[0].State.Terminated; term == nil || term.ExitCode != 137 {
		t.Fatalf("killed container: %+v", p.Status.ContainerStatuses[0].State)
	}
}

func TestDeleteStopsProcessesWithinGrace(t *testing.T) {
	env := kubetest.Load(t)
	cs := env.Client(t)
	ns := env.Namespace(t)
	ctx := context.Background()
	// One pod leaves on SIGTERM, one ignores it and is SIGKILLed after its 1 s grace period.
	create(t, cs, ns, shPod("polite", `trap 'echo got TERM; exit 0' TERM; echo up; while :; do sleep 0.1; done`, corev1.RestartPolicyNever))
	create(t, cs, ns, shPod("stubborn", `trap '' TERM; echo up; while :; do sleep 0.1; done`, corev1.RestartPolicyNever))
	for _, name := range []string{"polite", "stubborn"} {
		waitPod(t, cs, ns, name, "Running", running)
		waitFile(t, env.PodLog(ns, name, "main"), "up")
	}
	pids := map[string]int{}
	for _, name := range []string{"polite", "stubborn"} {
		pid, err := env.ContainerPID(ns, name, "")
		if err != nil {
			t.Fatal(err)
		}
		pids[name] = pid
		grace := int64(1)
		if err := cs.CoreV1().Pods(ns).Delete(ctx, name, metav1.DeleteOptions{GracePeriodSeconds: &grace}); err != nil {
			t.Fatal(err)
		}
	}
	for name, pid := range pids {
		testkit.WaitFor(t, "pod "+name+" removed", func() (bool, error) {
			_, err := cs.CoreV1().Pods(ns).Get(ctx, name, metav1.GetOptions{})
			return apierrors.IsNotFound(err), err
		})
		if err := processGone(pid); err != nil {
			t.Fatalf("pod %s: %v", name, err)
		}
	}
	waitFile(t, env.PodLog(ns, "polite", "main"), "got TERM")
}

// processGone is nil when no process pid (or of its group) is left.
func processGone(pid int) error {
	deadline := time.Now().Add(30 * time.Second)
	for time.Now().Before(deadline) {
		if _, err := os.Stat(fmt.Sprintf("/proc/%d", pid)); os.IsNotExist(err) {
			return nil
		}
		time.Sleep(50 * time.Millisecond)
	}
	return fmt.Errorf("process %d still there after its pod was removed", pid)
}

func TestRestartPolicyAlwaysRestartsKilledContainer(t *testing.T) {
	env := kubetest.Load(t)
	cs := env.Client(t)
	ns := env.Namespace(t)
	create(t, cs, ns, shPod("phoenix", "echo start; exec sleep 600", corev1.RestartPolicyAlways))
	waitPod(t, cs, ns, "phoenix", "Running", running)
	first, err := env.ContainerPID(ns, "phoenix", "")
	if err != nil {
		t.Fatal(err)
	}
	if err := env.KillContainer(ns, "phoenix"); err != nil {
		t.Fatal(err)
	}
	p := waitPod(t, cs, ns, "phoenix", "running again after a restart", func(p *corev1.Pod) bool {
		cs := p.Status.ContainerStatuses
		return p.Status.Phase == corev1.PodRunning && len(cs) == 1 && cs[0].RestartCount == 1 && cs[0].State.Running != nil
	})
	last := p.Status.ContainerStatuses[0].LastTerminationState.Terminated
	if last == nil || last.ExitCode != 137 {
		t.Fatalf("lastState %+v", p.Status.ContainerStatuses[0].LastTerminationState)
	}
	second, err := env.ContainerPID(ns, "phoenix", "")
	if err != nil || second == first {
		t.Fatalf("pid after the restart %d (before %d): %v", second, first, err)
	}
	out := waitFile(t, env.PodLog(ns, "phoenix", "main"), "start\nstart\n")
	if out != "start\nstart\n" {
		t.Fatalf("log %q", out)
	}
}
