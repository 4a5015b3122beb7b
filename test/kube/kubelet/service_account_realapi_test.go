package kubelet_test

import (
	"context"
	"fmt"
	"os"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/clientcmd"

	"github.com/tidestream/tide/test/kube/kubetest"
)

// The test binary doubles as a pod's process: with envHelper=list-pods it lists the pods
// of its namespace through $KUBECONFIG and prints "listed N" or "denied: <error>".
const envHelper = "TIDE_KUBELET_TEST_HELPER"

func TestMain(m *testing.M) {
	if os.Getenv(envHelper) == "list-pods" {
		os.Exit(helperListPods())
	}
	os.Exit(m.Run())
}

func helperListPods() int {
	rc, err := clientcmd.BuildConfigFromFlags("", os.Getenv("KUBECONFIG"))
	if err != nil {
		fmt.Println("no kubeconfig:", err)
		return 2
	}
	cs, err := kubernetes.NewForConfig(rc)
	if err != nil {
		fmt.Println("no client:", err)
		return 2
	}
	l, err := cs.CoreV1().Pods(os.Getenv("NS")).List(context.Background(), metav1.ListOptions{})
	if err != nil {
		fmt.Println("denied:", err)
		return 0
	}
	fmt.Println("listed", len(l.Items))
	return 0
}

// TestPodTalksToAPIServerAsItsServiceAccount: a pod's process gets a KUBECONFIG holding a
// token of its service account, so RBAC decides what it may do: nothing at first, listing
// pods once a RoleBinding grants it.
func TestPodTalksToAPIServerAsItsServiceAccount(t *testing.T) {
	env := kubetest.Load(t)
	cs := env.Client(t)
	ns := env.Namespace(t)
	ctx := context.Background()
	if _, err := cs.CoreV1().ServiceAccounts(ns).Create(ctx, &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Name: "am"}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	pod := func(name string) *corev1.Pod {
		p := shPod(name, "", corev1.RestartPolicyNever)
		p.Spec.ServiceAccountName = "am"
		p.Spec.Containers[0].Command = []string{os.Args[0]}
		p.Spec.Containers[0].Env = []corev1.EnvVar{{Name: envHelper, Value: "list-pods"},
			{Name: "NS", ValueFrom: &corev1.EnvVarSource{FieldRef: &corev1.ObjectFieldSelector{FieldPath: "metadata.namespace"}}}}
		return p
	}
	create(t, cs, ns, pod("before"))
	out := waitFile(t, env.PodLog(ns, "before", "main"), "\n")
	if !strings.HasPrefix(out, "denied:") || !strings.Contains(out, "system:serviceaccount:"+ns+":am") {
		t.Fatalf("without a RoleBinding the pod printed %q, want it denied as system:serviceaccount:%s:am", out, ns)
	}
	if _, err := cs.RbacV1().Roles(ns).Create(ctx, &rbacv1.Role{ObjectMeta: metav1.ObjectMeta{Name: "pods"},
		Rules: []rbacv1.PolicyRule{{APIGroups: []string{""}, Resources: []string{"pods"}, Verbs: []string{"list"}}}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, err := cs.RbacV1().RoleBindings(ns).Create(ctx, &rbacv1.RoleBinding{ObjectMeta: metav1.ObjectMeta{Name: "am-pods"},
		RoleRef:  rbacv1.RoleRef{APIGroup: "rbac.authorization.k8s.io", Kind: "Role", Name: "pods"},
		Subjects: []rbacv1.Subject{{Kind: "ServiceAccount", Name: "am", Namespace: ns}}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	create(t, cs, ns, pod("after"))
	if out := waitFile(t, env.PodLog(ns, "after", "main"), "\n"); !strings.HasPrefix(out, "listed ") {
		t.Fatalf("with the RoleBinding the pod printed %q, want it to list pods", out)
	}
}
