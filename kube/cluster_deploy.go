package kube

import (
	"context"
	"errors"
	"fmt"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes"
)

// ErrClusterExists: the namespace already holds a cluster of that id.
var ErrClusterExists = errors.New("a tide cluster of that id already exists")

// Deployed lists what Deploy created, "Kind/name" each.
type Deployed struct {
	Deployment *appsv1.Deployment
	Objects    []string
}

// Deploy creates the cluster: the AM Deployment with zero replicas, then the objects it
// mounts and runs with (ServiceAccount, Role and RoleBinding when the spec makes them, the
// Secret, the ConfigMap, the Service), each owned by the Deployment but the Role and
// RoleBinding, which the ServiceAccount owns (see DeleteCluster), then scales the
// Deployment to one replica, so the AM pod never starts before what it mounts exists. When a
// step fails, what was created is deleted again and the error names the object.
func Deploy(ctx context.Context, cs kubernetes.Interface, s ClusterSpec) (*Deployed, error) {
	if err := s.Check(); err != nil {
		return nil, err
	}
	ns := s.Namespace
	if _, err := cs.AppsV1().Deployments(ns).Get(ctx, DeploymentName(s.ClusterID), metav1.GetOptions{}); err == nil {
		return nil, fmt.Errorf("Deployment %s in namespace %s: %w: cancel it (tide cancel -m kubernetes:%s) or choose another kubernetes.cluster-id",
			DeploymentName(s.ClusterID), ns, ErrClusterExists, s.ClusterID)
	} else if !apierrors.IsNotFound(err) {
		return nil, describe(err, "get", "Deployment", ns, DeploymentName(s.ClusterID))
	}
	d, err := cs.AppsV1().Deployments(ns).Create(ctx, s.Deployment(0), metav1.CreateOptions{})
	if err != nil {
		return nil, describe(err, "create", "Deployment", ns, DeploymentName(s.ClusterID))
	}
	out := &Deployed{Deployment: d, Objects: []string{"Deployment/" + d.Name}}
	undo := func(err error) (*Deployed, error) {
		if _, derr := DeleteCluster(context.WithoutCancel(ctx), cs, ns, s.ClusterID, ""); derr != nil {
			return nil, fmt.Errorf("%w (and removing what was created: %v)", err, derr)
		}
		return nil, err
	}
	type step struct {
		kind, name string
		create     func() error
	}
	var steps []step
	if s.CreateRBAC {
		var sa *corev1.ServiceAccount
		steps = append(steps,
			step{"ServiceAccount", s.ServiceAccount, func() error {
				var err error
				sa, err = cs.CoreV1().ServiceAccounts(ns).Create(ctx, s.ServiceAccountObject(d), metav1.CreateOptions{})
				return err
			}},
			step{"Role", RoleName(s.ClusterID), func() error {
				_, err := cs.RbacV1().Roles(ns).Create(ctx, s.Role(sa), metav1.CreateOptions{})
				return err
			}},
			step{"RoleBinding", RoleName(s.ClusterID), func() error {
				_, err := cs.RbacV1().RoleBindings(ns).Create(ctx, s.RoleBinding(sa), metav1.CreateOptions{})
				return err
			}})
	}
	steps = append(steps,
		step{"Secret", SecretName(s.ClusterID), func() error {
			_, err := cs.CoreV1().Secrets(ns).Create(ctx, s.Secret(d), metav1.CreateOptions{})
			return err
		}},
		step{"ConfigMap", ConfigMapName(s.ClusterID), func() error {
			_, err := cs.CoreV1().ConfigMaps(ns).Create(ctx, s.ConfigMap(d), metav1.CreateOptions{})
			return err
		}},
		step{"Service", ServiceName(s.ClusterID), func() error {
			_, err := cs.CoreV1().Services(ns).Create(ctx, s.Service(d), metav1.CreateOptions{})
			return err
		}})
	for _, st := range steps {
		if err := st.create(); err != nil {
			return undo(describe(err, "create", st.kind, ns, st.name))
		}
		out.Objects = append(out.Objects, st.kind+"/"+st.name)
	}
	scaled, err := cs.AppsV1().Deployments(ns).Patch(ctx, d.Name, types.MergePatchType, []byte(`{"spec":{"replicas":1}}`), metav1.PatchOptions{})
	if err != nil {
		return undo(describe(err, "scale to one replica", "Deployment", ns, d.Name))
	}
	out.Deployment = scaled
	return out, nil
}

// describe wraps an API error with what was attempted; a forbidden request names the verb
// and the resource (the API's own message names the user).
func describe(err error, verb, kind, ns, name string) error {
	switch {
	case apierrors.IsForbidden(err):
		return fmt.Errorf("%s %s %s in namespace %s: forbidden (the kubeconfig's user needs %q on %s): %w", verb, kind, name, ns, verb, resourceOf(kind), err)
	case apierrors.IsNotFound(err) && kind != "" && isNamespaceMissing(err, ns):
		return fmt.Errorf("%s %s %s: namespace %s does not exist (kubernetes.namespace): %w", verb, kind, name, ns, err)
	}
	return fmt.Errorf("%s %s %s in namespace %s: %w", verb, kind, name, ns, err)
}

func isNamespaceMissing(err error, ns string) bool {
	var st apierrors.APIStatus
	if !errors.As(err, &st) {
		return false
	}
	d := st.Status().Details
	return d != nil && d.Kind == "namespaces" && d.Name == ns
}

// resourceOf is the API resource a kind lives at, as RBAC names it.
func resourceOf(kind string) string {
	switch kind {
	case "Deployment":
		return "deployments.apps"
	case "ReplicaSet":
		return "replicasets.apps"
	case "Role":
		return "roles.rbac.authorization.k8s.io"
	case "RoleBinding":
		return "rolebindings.rbac.authorization.k8s.io"
	case "ServiceAccount":
		return "serviceaccounts"
	case "ConfigMap":
		return "configmaps"
	case "Secret":
		return "secrets"
	case "Service":
		return "services"
	case "Pod":
		return "pods"
	case "Namespace":
		return "namespaces"
	}
	return kind
}
