package kube

import (
	"context"
	"net"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes/fake"

	"github.com/tidestream/tide/conf"
)

func loadConf(t *testing.T, dynamic ...string) *conf.Config {
	t.Helper()
	t.Setenv(conf.EnvConfDir, "")
	cfg, _, err := conf.Load("", dynamic)
	if err != nil {
		t.Fatal(err)
	}
	return cfg
}

// TestDriverFromConf: the kubernetes.* keys reach the pods, and the AM's own pod owns them.
func TestDriverFromConf(t *testing.T) {
	t.Setenv(EnvAMPodName, "wc-am-0")
	cs := fake.NewClientset(&corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "wc-am-0", Namespace: "flink", UID: "uid-am"}})
	cfg := loadConf(t, "kubernetes.namespace=flink", "kubernetes.cluster-id=wc", "kubernetes.container.image=reg/tide:1",
		"kubernetes.node-name-label=example.com/node", "taskmanager.numberOfTaskSlots=2", "kubernetes.service-account=tide-am")
	d, err := NewDriverFromConf(context.Background(), cfg, cs, "job-1", "WordCount", "run-9", &net.TCPAddr{IP: net.ParseIP("10.1.2.3"), Port: 6123}, nil)
	if err != nil {
		t.Fatal(err)
	}
	p, err := d.cfg.Pod.Build("wc-taskmanager-1-1", 1, []string{"n1"})
	if err != nil {
		t.Fatal(err)
	}
	if d.cfg.Namespace != "flink" || p.Spec.Containers[0].Image != "reg/tide:1" || p.Spec.ServiceAccountName != "tide-am" {
		t.Errorf("namespace %s image %s service account %s", d.cfg.Namespace, p.Spec.Containers[0].Image, p.Spec.ServiceAccountName)
	}
	if got := p.Spec.Affinity.NodeAffinity.RequiredDuringSchedulingIgnoredDuringExecution.NodeSelectorTerms[0].MatchExpressions[0].Key; got != "example.com/node" {
		t.Errorf("NotIn key %s, want example.com/node", got)
	}
	if got := p.Spec.Containers[0].Resources.Requests.Cpu().MilliValue(); got != 2000 {
		t.Errorf("cpu %dm, want 2000m (one per slot)", got)
	}
	if len(p.OwnerReferences) != 1 || p.OwnerReferences[0].UID != "uid-am" {
		t.Errorf("owner %+v, want the AM pod", p.OwnerReferences)
	}
	if !strings.Contains(strings.Join(p.Spec.Containers[0].Args, " "), "-Djobmanager.rpc.address=10.1.2.3") {
		t.Errorf("args %v lack the AM address", p.Spec.Containers[0].Args)
	}
}

func TestDriverFromConfErrors(t *testing.T) {
	addr := &net.TCPAddr{IP: net.ParseIP("10.1.2.3"), Port: 6123}
	if _, err := NewDriverFromConf(context.Background(), loadConf(t, "kubernetes.cluster-id=Bad_ID"), fake.NewClientset(), "j", "J", "r", addr, nil); err == nil || !strings.Contains(err.Error(), "kubernetes.cluster-id") {
		t.Errorf("bad cluster id: %v", err)
	}
	t.Setenv(EnvAMPodName, "missing-pod")
	if _, err := NewDriverFromConf(context.Background(), loadConf(t), fake.NewClientset(), "j", "J", "r", addr, nil); err == nil || !strings.Contains(err.Error(), "missing-pod") {
		t.Errorf("missing AM pod: %v", err)
	}
	if id, err := ClusterID(loadConf(t), "Word Count!"); err != nil || id != "tide-word-count" {
		t.Errorf("ClusterID from job name = %q, %v", id, err)
	}
}
