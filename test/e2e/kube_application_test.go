package e2e

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/util/retry"

	"github.com/tidestream/tide/internal/testkit"
	"github.com/tidestream/tide/kube"
)

// TestKubeApplication runs CheckableCount as a tide cluster on the harness's control plane
// (real API server, scheduler, controller-manager; pods as local processes) through one
// life: submitted with tide run --target kubernetes-application, a TaskManager's process
// killed (its pod fails, a replacement comes), a pod deleted, a node blocked with
// --evacuate (its pods go, the scheduler puts the replacements on the other nodes) and
// unblocked, the AM's process killed (the kubelet restarts the container, the new AM adopts
// the same TaskManager pods and processes and recovers from the newest checkpoint), the AM's
// pod deleted (the Deployment's new pod adopts them the same way), and
// slotmanager.number-of-slots.max raised by a ConfigMap edit (the job scales up live). The
// job then finishes with the exact answer and the AM removes every object of the cluster.
func TestKubeApplication(t *testing.T) {
	k := newKubeApp(t)
	ckpt, out := t.TempDir(), t.TempDir()
	// About 75 s of input at p=2: the job must outlive the steps below (it counts only what
	// it reads, so a slower machine stretches both).
	jobArgs := []string{"--records", "15000", "--keys", "7", "--rate", "100", "--output", out}
	args := k.checkableCountArgs(ckpt, 2)
	t0 := time.Now()
	runOut := k.submit(append(append(args, "--"), jobArgs...)...)
	t.Logf("tide run (%s):\n%s", time.Since(t0).Round(time.Millisecond), runOut)
	if !strings.Contains(runOut, "Job RUNNING") || !strings.Contains(runOut, "Detached: cluster "+k.id) {
		t.Fatalf("tide run --detached did not return at RUNNING:\n%s", runOut)
	}
	left := k.leftovers()
	for _, want := range []string{"Deployment/" + k.id, "ConfigMap/tide-config-" + k.id, "ConfigMap/" + k.id + "-status",
		"Service/" + k.id + "-rest", "Secret/" + k.id + "-secret", "ServiceAccount/" + k.id, "Role/" + k.id + "-am", "RoleBinding/" + k.id + "-am"} {
		if !slices.Contains(left, want) {
			t.Errorf("%s missing from the cluster's objects %v", want, left)
		}
	}
	get := k.rest()
	jid := testkit.WaitJobID(t, get)
	testkit.WaitRunningAt(t, get, jid, 2)
	pods := k.waitTMPods("two TaskManager pods", podCount(2))

	// A TaskManager's process dies: its pod fails and a replacement pod takes its place.
	victim := pods[0].Name
	if err := k.env.KillContainer(k.ns, victim); err != nil {
		t.Fatal(err)
	}
	pods = k.waitTMPods("a replacement for the killed TaskManager", func(p []corev1.Pod) error {
		if slices.Contains(names(p), victim) || len(p) != 2 {
			return fmt.Errorf("pods %v (killed %s)", names(p), victim)
		}
		return nil
	})
	testkit.WaitRunningAt(t, get, jid, 2)

	// A pod deleted by hand: the same.
	victim = pods[1].Name
	if err := k.cs.CoreV1().Pods(k.ns).Delete(context.Background(), victim, metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	pods = k.waitTMPods("a replacement for the deleted pod", func(p []corev1.Pod) error {
		if slices.Contains(names(p), victim) || len(p) != 2 {
			return fmt.Errorf("pods %v (deleted %s)", names(p), victim)
		}
		return nil
	})
	testkit.WaitRunningAt(t, get, jid, 2)

	// Block the node of a TaskManager with --evacuate: its pods go, the replacements land
	// elsewhere (the real scheduler follows the NotIn node affinity).
	blocked := pods[0].Spec.NodeName
	old := k.allTMPodNames() // pending ones too: a replacement may still be on its way
	if o, err := k.tide(time.Minute, "blocklist", "add", blocked, "--evacuate", "--cause", "e2e", "-m", k.target()); err != nil {
		t.Fatalf("blocklist add: %v\n%s", err, o)
	}
	pods = k.waitTMPods("TaskManager pods off the blocked node "+blocked, func(p []corev1.Pod) error {
		for _, pod := range p {
			if pod.Spec.NodeName == blocked {
				return fmt.Errorf("pod %s still on %s", pod.Name, blocked)
			}
		}
		return podCount(2)(p)
	})
	testkit.WaitRunningAt(t, get, jid, 2)
	for _, p := range pods {
		if !slices.Contains(old, p.Name) && !slices.Contains(notIn(&p), blocked) {
			t.Errorf("pod %s, created after the block, keeps off %v, not %s", p.Name, notIn(&p), blocked)
		}
	}
	if o, err := k.tide(time.Minute, "blocklist", "remove", blocked, "-m", k.target()); err != nil {
		t.Fatalf("blocklist remove: %v\n%s", err, o)
	}

	// Kill the AM's process: the kubelet restarts the container, the new AM adopts the
	// TaskManager pods (the same processes) and recovers the job.
	before := map[string]int{}
	for _, p := range pods {
		pid, err := k.env.ContainerPID(k.ns, p.Name, "")
		if err != nil {
			t.Fatal(err)
		}
		before[p.Name] = pid
	}
	am := k.amPod()
	oldAddr, err := kube.RESTAddress(context.Background(), k.cs, k.ns, k.id)
	if err != nil {
		t.Fatal(err)
	}
	var ckptBefore testkit.CheckpointStats
	if err := get("/jobs/"+jid+"/checkpoints", &ckptBefore); err != nil {
		t.Fatal(err)
	}
	tKill := time.Now()
	if err := k.env.KillContainer(k.ns, am.Name); err != nil {
		t.Fatal(err)
	}
	testkit.WaitFor(t, "the AM container restarted with a new address", func() (bool, error) {
		addr, err := kube.RESTAddress(context.Background(), k.cs, k.ns, k.id)
		return err == nil && addr != oldAddr, err
	})
	testkit.WaitRunningAt(t, get, jid, 2)
	t.Logf("AM killed -> job RUNNING again: %s", time.Since(tKill).Round(time.Millisecond))
	if p := k.amPod(); p.Name != am.Name || p.Status.ContainerStatuses[0].RestartCount < 1 {
		t.Errorf("AM pod %s restarts %d, want %s restarted in place", p.Name, p.Status.ContainerStatuses[0].RestartCount, am.Name)
	}
	after, err := k.tmPods()
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range after {
		pid, _ := k.env.ContainerPID(k.ns, p.Name, "")
		if before[p.Name] != pid {
			t.Errorf("TaskManager pod %s: process %d after the AM restart, %d before: want the same pods and processes adopted", p.Name, pid, before[p.Name])
		}
	}
	if len(after) != len(before) {
		t.Errorf("TaskManager pods %v after the AM restart, %v before", names(after), before)
	}

	// Delete the AM's pod: the Deployment makes a new one (another name), whose AM adopts
	// the TaskManager pods by label (the same processes again) and recovers the job.
	oldAddr, err = kube.RESTAddress(context.Background(), k.cs, k.ns, k.id)
	if err != nil {
		t.Fatal(err)
	}
	tDel := time.Now()
	if err := k.cs.CoreV1().Pods(k.ns).Delete(context.Background(), am.Name, metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	testkit.WaitFor(t, "a new AM pod that published its address", func() (bool, error) {
		p, err := kube.CurrentAMPod(context.Background(), k.cs, k.ns, k.id)
		if err != nil || p == nil || p.Name == am.Name {
			return false, err
		}
		addr, err := kube.RESTAddress(context.Background(), k.cs, k.ns, k.id)
		return err == nil && addr != oldAddr, err
	})
	testkit.WaitRunningAt(t, get, jid, 2)
	t.Logf("AM pod deleted -> job RUNNING again on a new AM pod: %s", time.Since(tDel).Round(time.Millisecond))
	adopted, err := k.tmPods()
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range adopted {
		pid, _ := k.env.ContainerPID(k.ns, p.Name, "")
		if before[p.Name] != pid {
			t.Errorf("TaskManager pod %s: process %d on the new AM pod, %d before: want the same pods and processes adopted", p.Name, pid, before[p.Name])
		}
	}
	if len(adopted) != len(before) {
		t.Errorf("TaskManager pods %v on the new AM pod, %v before", names(adopted), before)
	}

	// Raise slotmanager.number-of-slots.max in the ConfigMap: the AM reloads it and the job
	// scales up onto a third pod.
	cms := k.cs.CoreV1().ConfigMaps(k.ns)
	if err := retry.RetryOnConflict(retry.DefaultRetry, func() error {
		cm, err := cms.Get(context.Background(), kube.ConfigMapName(k.id), metav1.GetOptions{})
		if err != nil {
			return err
		}
		y := cm.Data["flink-conf.yaml"]
		if !strings.Contains(y, "slotmanager.number-of-slots.max: \"2\"") && !strings.Contains(y, "slotmanager.number-of-slots.max: 2") {
			return fmt.Errorf("flink-conf.yaml in the ConfigMap does not set the maximum to 2:\n%s", y)
		}
		y = strings.Replace(y, "slotmanager.number-of-slots.max: \"2\"", "slotmanager.number-of-slots.max: \"3\"", 1)
		cm.Data["flink-conf.yaml"] = strings.Replace(y, "slotmanager.number-of-slots.max: 2\n", "slotmanager.number-of-slots.max: 3\n", 1)
		_, err = cms.Update(context.Background(), cm, metav1.UpdateOptions{})
		return err
	}); err != nil {
		t.Fatal(err)
	}
	third := k.waitTMPods("a third TaskManager pod after the ConfigMap edit", podCount(3))
	testkit.WaitRunningAt(t, get, jid, 3)
	// The node was unblocked before: a pod created since may land there again (its
	// required node affinity no longer keeps it off).
	for _, p := range third {
		if _, ok := before[p.Name]; !ok && slices.Contains(notIn(&p), blocked) {
			t.Errorf("pod %s, created after %s was unblocked, still keeps off it: %v", p.Name, blocked, notIn(&p))
		}
	}

	// The job finishes with the exact answer; the AM removes the cluster.
	deadline := time.Now().Add(5 * time.Minute)
	for left := k.leftovers(); len(left) > 0; left = k.leftovers() {
		if time.Now().After(deadline) {
			t.Fatalf("5 min on, the job has not finished or the AM left %v", left)
		}
		time.Sleep(time.Second)
	}
	testkit.CheckExactOutput(t, out, jobArgs)
}

// notIn is what a pod's required node affinity keeps it off.
func notIn(p *corev1.Pod) []string {
	a := p.Spec.Affinity
	if a == nil || a.NodeAffinity == nil || a.NodeAffinity.RequiredDuringSchedulingIgnoredDuringExecution == nil {
		return nil
	}
	var out []string
	for _, term := range a.NodeAffinity.RequiredDuringSchedulingIgnoredDuringExecution.NodeSelectorTerms {
		for _, r := range term.MatchExpressions {
			if r.Operator == corev1.NodeSelectorOpNotIn {
				out = append(out, r.Values...)
			}
		}
	}
	return out
}
