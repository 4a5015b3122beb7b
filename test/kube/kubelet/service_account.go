package kubelet

import (
	"context"
	"fmt"
	"os"
	"path/filepath"

	authenticationv1 "k8s.io/api/authentication/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// A pod's service-account identity. A real kubelet mounts a token at
// /var/run/secrets/kubernetes.io/serviceaccount, a path client-go's in-cluster configuration
// reads as is and the test kubelet cannot map (see the package doc). Instead it asks the API
// server for a token of the pod's service account ("default" when the pod names none;
// TokenRequest, bound to the pod when it names its account) and writes
// a kubeconfig holding it to <pod dir>/serviceaccount/kubeconfig, which the containers get as
// KUBECONFIG (unless they set KUBECONFIG themselves): a process in the pod talks to the API
// server as system:serviceaccount:<namespace>:<account>, so RBAC applies as on a real cluster.
// automountServiceAccountToken: false on the pod or its account turns this off.

// serviceAccountLifetime is how long a pod's token is valid; pods in tests live shorter.
const serviceAccountLifetime = 24 * 3600

// serviceAccountKubeconfig writes the pod's kubeconfig and returns its path, "" when the pod
// opts out.
func (k *Kubelet) serviceAccountKubeconfig(ctx context.Context, p *corev1.Pod, podDir string) (string, error) {
	if k.cfg.APIServerURL == "" || (p.Spec.AutomountServiceAccountToken != nil && !*p.Spec.AutomountServiceAccountToken) {
		return "", nil
	}
	name := p.Spec.ServiceAccountName
	if name == "" {
		name = "default"
	}
	sa, err := k.cfg.Client.CoreV1().ServiceAccounts(p.Namespace).Get(ctx, name, metav1.GetOptions{})
	if err != nil {
		return "", errNotReady{fmt.Sprintf("service account %s/%s: %v", p.Namespace, name, err)}
	}
	if sa.AutomountServiceAccountToken != nil && !*sa.AutomountServiceAccountToken && p.Spec.AutomountServiceAccountToken == nil {
		return "", nil
	}
	exp := int64(serviceAccountLifetime)
	spec := authenticationv1.TokenRequestSpec{ExpirationSeconds: &exp}
	if p.Spec.ServiceAccountName != "" {
		// The API server binds a token to a pod only if the pod names the account; with
		// ServiceAccount admission off, a pod that names none keeps an empty name.
		spec.BoundObjectRef = &authenticationv1.BoundObjectReference{Kind: "Pod", APIVersion: "v1", Name: p.Name, UID: p.UID}
	}
	tr, err := k.cfg.Client.CoreV1().ServiceAccounts(p.Namespace).CreateToken(ctx, name, &authenticationv1.TokenRequest{Spec: spec}, metav1.CreateOptions{})
	if err != nil {
		return "", errNotReady{fmt.Sprintf("token of service account %s/%s: %v", p.Namespace, name, err)}
	}
	dir := filepath.Join(podDir, "serviceaccount")
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return "", err
	}
	for f, v := range map[string]string{"token": tr.Status.Token, "namespace": p.Namespace} {
		if err := os.WriteFile(filepath.Join(dir, f), []byte(v), 0o600); err != nil {
			return "", err
		}
	}
	kc := fmt.Sprintf(`apiVersion: v1
kind: Config
clusters:
- name: cluster
  cluster:
    server: %s
    insecure-skip-tls-verify: true
users:
- name: %s
  user:
    tokenFile: %s
contexts:
- name: pod
  context:
    cluster: cluster
    user: %s
    namespace: %s
current-context: pod
`, k.cfg.APIServerURL, name, filepath.Join(dir, "token"), name, p.Namespace)
	path := filepath.Join(dir, "kubeconfig")
	if err := os.WriteFile(path, []byte(kc), 0o600); err != nil {
		return "", err
	}
	return path, nil
}
