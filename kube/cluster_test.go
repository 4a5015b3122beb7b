package kube

import (
	"context"
	"errors"
	"slices"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/kubernetes/fake"
	k8stesting "k8s.io/client-go/testing"
)

func testClusterSpec() ClusterSpec {
	return ClusterSpec{
		ClusterID: "tide-count", Namespace: "ns1", Image: "tide:test", PullPolicy: corev1.PullIfNotPresent,
		Command: "/opt/tide/bin/tide", ConfDir: "/opt/tide/conf", ServiceAccount: "tide-count", CreateRBAC: true,
		CPU: 0.5, MemoryMB: 512, RESTPort: 8081, RPCPort: 6123, ExposedType: corev1.ServiceTypeClusterIP,
		JobName: "CheckableCount", JobArgs: []string{"--records", "100"},
		FlinkConf:      []byte("execution-mode: reactive\n"),
		InternalSecret: []byte("0123456789abcdef0123456789abcdef"), RESTToken: "rest-token-value-123",
		Env: map[string]string{"TIDE_LOG_LEVEL": "debug"},
	}
}

// TestClusterManifests: the AM Deployment mounts the ConfigMap as a directory (no subPath,
// so edits reach the file), restarts its container in place, takes the secret from the
// Secret only; the secret and the token appear in no ConfigMap, argument or plain env value.
func TestClusterManifests(t *testing.T) {
	s := testClusterSpec()
	d := s.Deployment(1)
	if *d.Spec.Replicas != 1 || d.Spec.Strategy.Type != "Recreate" {
		t.Errorf("replicas %d strategy %s", *d.Spec.Replicas, d.Spec.Strategy.Type)
	}
	pod := d.Spec.Template.Spec
	if pod.RestartPolicy != corev1.RestartPolicyAlways || pod.ServiceAccountName != "tide-count" {
		t.Errorf("restart policy %s, service account %s", pod.RestartPolicy, pod.ServiceAccountName)
	}
	c := pod.Containers[0]
	if c.Command[0] != "/opt/tide/bin/tide" || c.Args[0] != "jobmanager" || !slices.Contains(c.Args, "CheckableCount") {
		t.Errorf("command %v args %v", c.Command, c.Args)
	}
	if i := slices.Index(c.Args, "--"); i < 0 || !slices.Equal(c.Args[i+1:], []string{"--records", "100"}) {
		t.Errorf("job arguments not after --: %v", c.Args)
	}
	if slices.Contains(c.Args, "--fromSavepoint") || slices.Contains(c.Args, "--allowNonRestoredState") {
		t.Errorf("savepoint flags without a savepoint: %v", c.Args)
	}
	sp := s
	sp.FromSavepoint, sp.AllowNonRestoredState = "hdfs:///sp/savepoint-1", true
	spArgs := sp.Deployment(1).Spec.Template.Spec.Containers[0].Args
	if i, j := slices.Index(spArgs, "--fromSavepoint"), slices.Index(spArgs, "--"); i < 0 || spArgs[i+1] != "hdfs:///sp/savepoint-1" || i > j ||
		!slices.Contains(spArgs[:j], "--allowNonRestoredState") {
		t.Errorf("--fromSavepoint hdfs:///sp/savepoint-1 --allowNonRestoredState not before the job's arguments: %v", spArgs)
	}
	for _, m := range c.VolumeMounts {
		if m.SubPath != "" {
			t.Errorf("mount %s uses subPath %q: ConfigMap edits would not reach the file", m.Name, m.SubPath)
		}
	}
	if c.VolumeMounts[0].MountPath != "/opt/tide/conf" || pod.Volumes[0].ConfigMap.Name != "tide-config-tide-count" {
		t.Errorf("config mount %+v volume %+v", c.VolumeMounts[0], pod.Volumes[0])
	}
	if m := *pod.Volumes[1].Secret.DefaultMode; m != 0o400 {
		t.Errorf("secret files mode %o, want 0400", m)
	}
	all := strings.Join(append(append([]string{}, c.Command...), c.Args...), " ")
	var sawSecretRef bool
	for _, e := range c.Env {
		all += " " + e.Value
		if e.Name == EnvInternalSecret {
			sawSecretRef = e.ValueFrom != nil && e.ValueFrom.SecretKeyRef != nil && e.ValueFrom.SecretKeyRef.Name == "tide-count-secret"
		}
	}
	cm := s.ConfigMap(d)
	for _, v := range cm.Data {
		all += " " + v
	}
	if strings.Contains(all, string(s.InternalSecret)) || strings.Contains(all, s.RESTToken) {
		t.Errorf("a secret leaked into args, env values or the ConfigMap: %s", all)
	}
	if !sawSecretRef {
		t.Errorf("no %s from the Secret in %+v", EnvInternalSecret, c.Env)
	}
	if !strings.Contains(all, "rest.auth.token-file="+SecretDir+"/rest-token") {
		t.Errorf("the AM is not told where the REST token file is: %s", all)
	}
	svc := s.Service(d)
	if svc.Spec.Type != corev1.ServiceTypeClusterIP || len(svc.Spec.Ports) != 2 || svc.Spec.Selector[LabelComponent] != ComponentJobManager {
		t.Errorf("service %+v", svc.Spec)
	}
	sa := s.ServiceAccountObject(d)
	for _, o := range []metav1.Object{cm, s.Secret(d), svc, s.Role(sa), s.RoleBinding(sa), sa} {
		// The Role and RoleBinding hang off the account (the AM deletes it last, the
		// garbage collector takes them after it); everything else off the Deployment.
		wantKind, wantName := "Deployment", "tide-count"
		if _, ok := o.(*rbacv1.Role); ok {
			wantKind = "ServiceAccount"
		}
		if _, ok := o.(*rbacv1.RoleBinding); ok {
			wantKind = "ServiceAccount"
		}
		refs := o.GetOwnerReferences()
		if len(refs) != 1 || refs[0].Kind != wantKind || refs[0].Name != wantName {
			t.Errorf("%s: owner references %+v, want the %s %s", o.GetName(), refs, wantKind, wantName)
		}
		if !ownedByCluster(o.GetLabels(), "tide-count") {
			t.Errorf("%s: labels %v", o.GetName(), o.GetLabels())
		}
	}
	// Ports 0 (tests on one machine): no container ports, the Service keeps Flink's.
	s.RESTPort, s.RPCPort = 0, 0
	if p := s.Deployment(1).Spec.Template.Spec.Containers[0].Ports; len(p) != 0 {
		t.Errorf("container ports %v for free ports", p)
	}
	if p := s.Service(d).Spec.Ports; p[0].Port != DefaultRESTPort || p[1].Port != DefaultRPCPort {
		t.Errorf("service ports %v", p)
	}
}

func TestClusterIDForSubmission(t *testing.T) {
	for id, ok := range map[string]bool{"tide-x": true, "1tide": false, "Tide": false, "a": true, strings.Repeat("a", 46): false} {
		if err := CheckSubmissionClusterID(id); (err == nil) != ok {
			t.Errorf("%q: %v", id, err)
		}
	}
}

// TestDeployAndDelete: Deploy creates every object, scales the Deployment to one replica
// only after them, and DeleteCluster removes them all, pods included (by label), leaving a
// service account that is not the cluster's.
func TestDeployAndDelete(t *testing.T) {
	ctx := context.Background()
	cs := fake.NewClientset(&corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Name: "default", Namespace: "ns1"}})
	var order []string
	cs.PrependReactor("*", "*", func(a k8stesting.Action) (bool, runtime.Object, error) {
		if a.GetVerb() == "create" || a.GetVerb() == "patch" {
			order = append(order, a.GetVerb()+" "+a.GetResource().Resource)
		}
		return false, nil, nil
	})
	s := testClusterSpec()
	dep, err := Deploy(ctx, cs, s)
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"create deployments", "create serviceaccounts", "create roles", "create rolebindings", "create secrets", "create configmaps", "create services", "patch deployments"}
	if !slices.Equal(order, want) {
		t.Errorf("order %v, want %v", order, want)
	}
	if *dep.Deployment.Spec.Replicas != 1 {
		t.Errorf("replicas %d after Deploy", *dep.Deployment.Spec.Replicas)
	}
	if _, err := Deploy(ctx, cs, s); !errors.Is(err, ErrClusterExists) {
		t.Errorf("second Deploy: %v, want ErrClusterExists", err)
	}
	// Pods the Deployment and the AM made.
	for _, p := range []*corev1.Pod{
		{ObjectMeta: metav1.ObjectMeta{Name: "tide-count-abc", Namespace: "ns1", Labels: AMLabels("tide-count")}},
		{ObjectMeta: metav1.ObjectMeta{Name: "tide-count-taskmanager-1-1", Namespace: "ns1", Labels: Selector("tide-count")}},
		{ObjectMeta: metav1.ObjectMeta{Name: "other", Namespace: "ns1", Labels: map[string]string{"app": "x"}}},
	} {
		if _, err := cs.CoreV1().Pods("ns1").Create(ctx, p, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	if err := PublishStatus(ctx, cs, "ns1", "tide-count", dep.Deployment, map[string]string{StatusRESTAddress: "10.0.0.5:8081"}); err != nil {
		t.Fatal(err)
	}
	left, err := Leftovers(ctx, cs, "ns1", "tide-count")
	if err != nil || len(left) != 10 {
		t.Errorf("before delete: %v %v", left, err)
	}
	deleted, err := DeleteCluster(ctx, cs, "ns1", "tide-count", "tide-count-abc")
	if err != nil {
		t.Fatal(err)
	}
	// The AM deletes its own pod after the TaskManagers', then the ServiceAccount, last; the
	// Role and RoleBinding it owns are the garbage collector's (the fake runs none).
	if i, j := slices.Index(deleted, "Pod/tide-count-abc"), slices.Index(deleted, "ServiceAccount/tide-count"); i < 0 || j != len(deleted)-1 ||
		slices.Index(deleted, "Pod/tide-count-taskmanager-1-1") > i || slices.Contains(deleted, "Role/tide-count-am") {
		t.Errorf("deleted %v: want TaskManager pods, then the AM's own pod, then the ServiceAccount only", deleted)
	}
	if left, err := Leftovers(ctx, cs, "ns1", "tide-count"); err != nil || !slices.Equal(left, []string{"Role/tide-count-am", "RoleBinding/tide-count-am"}) {
		t.Errorf("after the AM's delete: %v %v, want the Role and RoleBinding for the garbage collector", left, err)
	}
	// A client (tide cancel) deletes them itself.
	if again, err := DeleteCluster(ctx, cs, "ns1", "tide-count", ""); err != nil || !slices.Equal(again, []string{"RoleBinding/tide-count-am", "Role/tide-count-am"}) {
		t.Errorf("client delete after the AM's: %v %v", again, err)
	}
	if left, err := Leftovers(ctx, cs, "ns1", "tide-count"); err != nil || len(left) != 0 {
		t.Errorf("after delete: %v %v", left, err)
	}
	if _, err := cs.CoreV1().ServiceAccounts("ns1").Get(ctx, "default", metav1.GetOptions{}); err != nil {
		t.Errorf("the default service account went: %v", err)
	}
	if _, err := cs.CoreV1().Pods("ns1").Get(ctx, "other", metav1.GetOptions{}); err != nil {
		t.Errorf("another app's pod went: %v", err)
	}
	if again, err := DeleteCluster(ctx, cs, "ns1", "tide-count", ""); err != nil || len(again) != 0 {
		t.Errorf("second delete: %v %v", again, err)
	}
}

// TestUpdateStatusNeverCreates: the AM publishes how the job ended with UpdateStatus while
// tide cancel removes the cluster; a status ConfigMap already deleted stays deleted (it came
// back without an owner before, and outlived the cluster), one still there gets the fields.
func TestUpdateStatusNeverCreates(t *testing.T) {
	ctx := context.Background()
	cs := fake.NewClientset()
	end := map[string]string{StatusJobState: "CANCELED"}
	if there, err := UpdateStatus(ctx, cs, "ns1", "tide-count", end); err != nil || there {
		t.Fatalf("UpdateStatus without a ConfigMap: there=%v err=%v, want false, nil", there, err)
	}
	if left, err := Leftovers(ctx, cs, "ns1", "tide-count"); err != nil || len(left) != 0 {
		t.Fatalf("after UpdateStatus on a removed cluster: %v %v, want nothing", left, err)
	}
	if err := PublishStatus(ctx, cs, "ns1", "tide-count", nil, map[string]string{StatusRESTAddress: "10.0.0.5:8081"}); err != nil {
		t.Fatal(err)
	}
	if there, err := UpdateStatus(ctx, cs, "ns1", "tide-count", end); err != nil || !there {
		t.Fatalf("UpdateStatus on the ConfigMap: there=%v err=%v", there, err)
	}
	st, err := ReadStatus(ctx, cs, "ns1", "tide-count")
	if err != nil || st[StatusJobState] != "CANCELED" || st[StatusRESTAddress] != "10.0.0.5:8081" {
		t.Errorf("status %v %v: want the job state merged into the published address", st, err)
	}
	// Deleted between the read and the write: still no new ConfigMap.
	cs.PrependReactor("update", "configmaps", func(k8stesting.Action) (bool, runtime.Object, error) {
		_ = cs.Tracker().Delete(corev1.SchemeGroupVersion.WithResource("configmaps"), "ns1", StatusConfigMapName("tide-count"))
		return true, nil, apierrors.NewNotFound(corev1.Resource("configmaps"), StatusConfigMapName("tide-count"))
	})
	if there, err := UpdateStatus(ctx, cs, "ns1", "tide-count", end); err != nil || there {
		t.Errorf("UpdateStatus racing a delete: there=%v err=%v, want false, nil", there, err)
	}
	if st, err := ReadStatus(ctx, cs, "ns1", "tide-count"); err != nil || st != nil {
		t.Errorf("status after the racing delete: %v %v, want none", st, err)
	}
}

// TestDeployUndoesOnFailure: a forbidden create names the verb and resource, and what was
// created before it is removed.
func TestDeployUndoesOnFailure(t *testing.T) {
	ctx := context.Background()
	cs := fake.NewClientset()
	cs.PrependReactor("create", "secrets", func(a k8stesting.Action) (bool, runtime.Object, error) {
		return true, nil, apierrors.NewForbidden(schema.GroupResource{Resource: "secrets"}, "tide-count-secret",
			errors.New(`User "dev" cannot create resource "secrets" in API group "" in the namespace "ns1"`))
	})
	_, err := Deploy(ctx, cs, testClusterSpec())
	if err == nil || !strings.Contains(err.Error(), `forbidden (the kubeconfig's user needs "create" on secrets)`) || !strings.Contains(err.Error(), `User "dev"`) {
		t.Fatalf("err %v", err)
	}
	if left, lerr := Leftovers(ctx, cs, "ns1", "tide-count"); lerr != nil || len(left) != 0 {
		t.Errorf("left behind after a failed Deploy: %v %v", left, lerr)
	}
}

func TestCheckNamespace(t *testing.T) {
	ctx := context.Background()
	cs := fake.NewClientset(&corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "there"}})
	if err := CheckNamespace(ctx, cs, "there"); err != nil {
		t.Error(err)
	}
	if err := CheckNamespace(ctx, cs, "missing"); err == nil || !strings.Contains(err.Error(), "namespace missing does not exist (kubernetes.namespace)") {
		t.Errorf("missing namespace: %v", err)
	}
}

// TestRESTAddress: ClusterIP uses the address the AM published; NodePort the AM's node and
// the node port; LoadBalancer its ingress.
func TestRESTAddress(t *testing.T) {
	ctx := context.Background()
	s := testClusterSpec()
	for _, tc := range []struct {
		typ  corev1.ServiceType
		want string
	}{
		{corev1.ServiceTypeClusterIP, "10.1.2.3:8081"},
		{corev1.ServiceTypeNodePort, "192.168.0.7:30081"},
		{corev1.ServiceTypeLoadBalancer, "203.0.113.9:8081"},
	} {
		cs := fake.NewClientset(&corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: "n1"},
			Status: corev1.NodeStatus{Addresses: []corev1.NodeAddress{{Type: corev1.NodeInternalIP, Address: "192.168.0.7"}}}})
		s.ExposedType = tc.typ
		dep, err := Deploy(ctx, cs, s)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := RESTAddress(ctx, cs, "ns1", "tide-count"); !errors.Is(err, ErrNoAddress) {
			t.Errorf("%s before the AM published: %v", tc.typ, err)
		}
		svc, _ := cs.CoreV1().Services("ns1").Get(ctx, ServiceName("tide-count"), metav1.GetOptions{})
		svc.Spec.Ports[0].NodePort = 30081
		svc.Status.LoadBalancer.Ingress = []corev1.LoadBalancerIngress{{IP: "203.0.113.9"}}
		if _, err := cs.CoreV1().Services("ns1").Update(ctx, svc, metav1.UpdateOptions{}); err != nil {
			t.Fatal(err)
		}
		if _, err := cs.CoreV1().Pods("ns1").Create(ctx, &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "am", Namespace: "ns1", Labels: AMLabels("tide-count")},
			Spec: corev1.PodSpec{NodeName: "n1"}}, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
		if err := PublishStatus(ctx, cs, "ns1", "tide-count", dep.Deployment, map[string]string{StatusRESTAddress: "10.1.2.3:8081"}); err != nil {
			t.Fatal(err)
		}
		got, err := RESTAddress(ctx, cs, "ns1", "tide-count")
		if err != nil || got != tc.want {
			t.Errorf("%s: %q %v, want %q", tc.typ, got, err, tc.want)
		}
		tok, err := RESTToken(ctx, cs, "ns1", "tide-count")
		if err != nil || tok != s.RESTToken {
			t.Errorf("token %q %v", tok, err)
		}
	}
}

// TestTaskManagerPodInCluster: a TaskManager pod of a submitted cluster takes the secret from
// the Secret and follows the AM's address through the status ConfigMap.
func TestTaskManagerPodInCluster(t *testing.T) {
	s := testPodSpec()
	s.InCluster = true
	p, err := s.Build(podName(s.ClusterID, 1, 1), 1, nil)
	if err != nil {
		t.Fatal(err)
	}
	c := p.Spec.Containers[0]
	var file string
	var secret bool
	for _, e := range c.Env {
		switch e.Name {
		case EnvAMAddressPath:
			file = e.Value
		case EnvInternalSecret:
			secret = e.ValueFrom != nil && e.ValueFrom.SecretKeyRef != nil && e.ValueFrom.SecretKeyRef.Name == SecretName(s.ClusterID)
		}
	}
	if file != StatusDir+"/"+StatusRPCAddress || !secret {
		t.Errorf("address file %q, secret from Secret %v", file, secret)
	}
	if len(p.Spec.Volumes) != 2 || p.Spec.Volumes[1].ConfigMap.Name != StatusConfigMapName(s.ClusterID) || c.VolumeMounts[1].MountPath != StatusDir {
		t.Errorf("volumes %+v mounts %+v", p.Spec.Volumes, c.VolumeMounts)
	}
}
