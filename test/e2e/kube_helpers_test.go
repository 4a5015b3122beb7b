package e2e

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/client-go/kubernetes"

	"github.com/tidestream/tide/internal/testkit"
	"github.com/tidestream/tide/kube"
	"github.com/tidestream/tide/test/kube/kubetest"
)

// kubeApp is a tide cluster that a test submitted with tide run --target
// kubernetes-application to the harness's control plane.
type kubeApp struct {
	t   testing.TB
	env *kubetest.Env
	cs  kubernetes.Interface
	ns  string
	id  string
	// procEnv is the environment of every tide command (KUBECONFIG of the harness).
	procEnv []string
}

// newKubeApp prepares a fresh namespace; submit starts the cluster in it.
func newKubeApp(t testing.TB) *kubeApp {
	env := kubetest.Load(t)
	k := &kubeApp{t: t, env: env, cs: env.Client(t), ns: env.Namespace(t),
		procEnv: append(os.Environ(), "KUBECONFIG="+env.Kubeconfig)}
	t.Cleanup(func() {
		if t.Failed() {
			k.dumpPodLogs()
		}
		if k.id != "" {
			ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
			defer cancel()
			_, _ = kube.DeleteCluster(ctx, k.cs, k.ns, k.id, "")
		}
	})
	return k
}

// podSettings are the -D properties that run a cluster's pods as local processes: the
// binary under test as the image's entry path, every port free and every server on
// loopback. The AM talks to the API server as its service account (the kubelet hands each
// pod a kubeconfig of its account), so the Role tide makes is what it runs with.
func (k *kubeApp) podSettings() []string {
	return []string{
		"-Dkubernetes.namespace=" + k.ns,
		"-Dkubernetes.entry.path=" + tideBin,
		"-Djobmanager.rpc.address=127.0.0.1", "-Djobmanager.rpc.port=0",
		"-Drest.bind-address=127.0.0.1", "-Drest.port=0",
		"-Djobmanager.memory.process.size=256 mb", "-Dtaskmanager.memory.process.size=256 mb",
	}
}

// checkableCountArgs are the settings of a CheckableCount cluster (podSettings) in reactive
// mode on at most maxSlots slots, checkpointing into ckpt every 500 ms.
func (k *kubeApp) checkableCountArgs(ckpt string, maxSlots int) []string {
	args := append(k.podSettings(), "--job-classname", "CheckableCount", fmt.Sprintf("-Dslotmanager.number-of-slots.max=%d", maxSlots))
	for _, d := range reactive(ckpt, "500 ms") {
		args = append(args, "-D"+d)
	}
	return args
}

var kubeSubmittedRE = regexp.MustCompile(`(?m)^Submitted cluster (\S+) to namespace`)

// submit runs tide run --target kubernetes-application --detached with args and returns
// its output once the job is RUNNING.
func (k *kubeApp) submit(args ...string) string {
	k.t.Helper()
	full := append([]string{"run", "--target", "kubernetes-application", "--detached"}, args...)
	out, err := testkit.RunCommand(context.Background(), 3*time.Minute, k.procEnv, tideBin, full...)
	if m := kubeSubmittedRE.FindStringSubmatch(out); m != nil {
		k.id = m[1]
	}
	if err != nil {
		k.t.Fatalf("tide run: %v\n%s", err, out)
	}
	if k.id == "" {
		k.t.Fatalf("tide run printed no cluster id:\n%s", out)
	}
	return out
}

// tide runs a tide command with the harness's kubeconfig.
func (k *kubeApp) tide(timeout time.Duration, args ...string) (string, error) {
	return testkit.RunCommand(context.Background(), timeout, k.procEnv, tideBin, args...)
}

// target is the -m value naming the cluster.
func (k *kubeApp) target() string { return "kubernetes:" + k.ns + "/" + k.id }

// rest reads the current AM's REST API (found through the status ConfigMap on every call).
func (k *kubeApp) rest() testkit.Getter {
	return func(path string, v any) error {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		addr, err := kube.RESTAddress(ctx, k.cs, k.ns, k.id)
		if err != nil {
			return err
		}
		return testkit.RESTGetter("http://"+addr)(path, v)
	}
}

// tmPods are the cluster's TaskManager pods that run and are not being deleted, by name.
func (k *kubeApp) tmPods() ([]corev1.Pod, error) {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	l, err := k.cs.CoreV1().Pods(k.ns).List(ctx, metav1.ListOptions{LabelSelector: labels.SelectorFromSet(kube.Selector(k.id)).String()})
	if err != nil {
		return nil, err
	}
	var out []corev1.Pod
	for _, p := range l.Items {
		if p.DeletionTimestamp == nil && p.Status.Phase == corev1.PodRunning {
			out = append(out, p)
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out, nil
}

// allTMPodNames are the names of every TaskManager pod of the cluster, in any phase.
func (k *kubeApp) allTMPodNames() []string {
	k.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	l, err := k.cs.CoreV1().Pods(k.ns).List(ctx, metav1.ListOptions{LabelSelector: labels.SelectorFromSet(kube.Selector(k.id)).String()})
	if err != nil {
		k.t.Fatal(err)
	}
	return names(l.Items)
}

// amPod is the cluster's current AM pod.
func (k *kubeApp) amPod() *corev1.Pod {
	k.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	p, err := kube.CurrentAMPod(ctx, k.cs, k.ns, k.id)
	if err != nil || p == nil {
		k.t.Fatalf("the AM pod of %s: %v", k.id, err)
	}
	return p
}

// leftovers are the cluster's objects still in the namespace.
func (k *kubeApp) leftovers() []string {
	k.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	left, err := kube.Leftovers(ctx, k.cs, k.ns, k.id)
	if err != nil {
		k.t.Fatal(err)
	}
	return left
}

// names lists pod names.
func names(pods []corev1.Pod) []string {
	out := make([]string, 0, len(pods))
	for _, p := range pods {
		out = append(out, p.Name)
	}
	return out
}

// dumpPodLogs shows the end of every pod log of the namespace (the kubelet's files).
func (k *kubeApp) dumpPodLogs() {
	logs, _ := filepath.Glob(filepath.Join(k.env.KubeletDir, "pods", k.ns, "*", "*.log"))
	for _, l := range logs {
		b, _ := os.ReadFile(l)
		lines := strings.Split(string(b), "\n")
		if len(lines) > 40 {
			lines = lines[len(lines)-40:]
		}
		k.t.Logf("---- %s (last lines)\n%s", l, strings.Join(lines, "\n"))
	}
}

// waitTMPods waits until cond holds for the running TaskManager pods.
func (k *kubeApp) waitTMPods(what string, cond func([]corev1.Pod) error) []corev1.Pod {
	k.t.Helper()
	var pods []corev1.Pod
	testkit.WaitFor(k.t, what, func() (bool, error) {
		var err error
		if pods, err = k.tmPods(); err != nil {
			return false, err
		}
		if err := cond(pods); err != nil {
			return false, err
		}
		return true, nil
	})
	return pods
}

// podCount is a condition: exactly n running TaskManager pods.
func podCount(n int) func([]corev1.Pod) error {
	return func(p []corev1.Pod) error {
		if len(p) != n {
			return fmt.Errorf("%d running TaskManager pods (%v), want %d", len(p), names(p), n)
		}
		return nil
	}
}
