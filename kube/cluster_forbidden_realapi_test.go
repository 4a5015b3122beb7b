package kube

import (
	"context"
	"strings"
	"testing"

	authv1 "k8s.io/api/authentication/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"

	"github.com/tidestream/tide/test/kube/kubetest"
)

// TestRealAPIDeployForbidden: submitting with a user the real API server's RBAC lets handle
// ConfigMaps (and look for an existing Deployment) but create nothing else fails naming the verb and resource it lacked and the user the
// server saw, and leaves nothing behind (what it created is removed).
func TestRealAPIDeployForbidden(t *testing.T) {
	env := kubetest.Load(t)
	admin := env.Client(t)
	ns := env.Namespace(t)
	ctx := context.Background()
	if _, err := admin.CoreV1().ServiceAccounts(ns).Create(ctx, &corev1.ServiceAccount{
		ObjectMeta: metav1.ObjectMeta{Name: "limited"}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, err := admin.RbacV1().Roles(ns).Create(ctx, &rbacv1.Role{ObjectMeta: metav1.ObjectMeta{Name: "configmaps-only"},
		Rules: []rbacv1.PolicyRule{
			{APIGroups: []string{""}, Resources: []string{"configmaps"}, Verbs: []string{"get", "list", "create", "update", "delete"}},
			{APIGroups: []string{""}, Resources: []string{"namespaces"}, Verbs: []string{"get"}},
			{APIGroups: []string{"apps"}, Resources: []string{"deployments"}, Verbs: []string{"get", "list"}},
		}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, err := admin.RbacV1().RoleBindings(ns).Create(ctx, &rbacv1.RoleBinding{ObjectMeta: metav1.ObjectMeta{Name: "limited"},
		RoleRef:  rbacv1.RoleRef{APIGroup: "rbac.authorization.k8s.io", Kind: "Role", Name: "configmaps-only"},
		Subjects: []rbacv1.Subject{{Kind: "ServiceAccount", Name: "limited", Namespace: ns}}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	tok, err := admin.CoreV1().ServiceAccounts(ns).CreateToken(ctx, "limited", &authv1.TokenRequest{}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	cfg, err := env.RESTConfig()
	if err != nil {
		t.Fatal(err)
	}
	cfg.BearerToken, cfg.BearerTokenFile = tok.Status.Token, ""
	cfg.CertFile, cfg.KeyFile, cfg.CertData, cfg.KeyData = "", "", nil, nil
	cfg.Username, cfg.Password = "", ""
	limited, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		t.Fatal(err)
	}

	spec := testClusterSpec()
	spec.Namespace = ns
	_, err = Deploy(ctx, limited, spec)
	if err == nil {
		t.Fatal("Deploy with a user that may only handle ConfigMaps succeeded")
	}
	msg := err.Error()
	for _, want := range []string{"forbidden (the kubeconfig's user needs \"create\" on ", "system:serviceaccount:" + ns + ":limited", "in namespace " + ns} {
		if !strings.Contains(msg, want) {
			t.Errorf("error %q lacks %q", msg, want)
		}
	}
	t.Logf("Deploy as a ConfigMaps-only user: %v", err)
	left, err := Leftovers(ctx, admin, ns, spec.ClusterID)
	if err != nil {
		t.Fatal(err)
	}
	if len(left) != 0 {
		t.Errorf("a forbidden Deploy left %v behind", left)
	}
}
