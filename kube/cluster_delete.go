package kube

import (
	"context"
	"errors"
	"fmt"
	"sort"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/client-go/kubernetes"
)

// DeleteCluster deletes every object of a cluster one by one, so nothing stays behind where
// no garbage collector follows the ownerReferences: the Deployment first (nothing makes AM
// pods after it), its ReplicaSets, the Service, the Secret, the ConfigMaps, the TaskManager
// pods, the AM pods (self, the caller's own pod when the AM cleans up after its job, last of
// them), then the RoleBinding, Role and ServiceAccount (the AM needs them until then; the AM
// itself deletes only the account, see below).
// Objects that do not carry the cluster's labels are left alone (a service account the user
// named). It returns what it deleted, "Kind/name" each; objects already gone are no error.
func DeleteCluster(ctx context.Context, cs kubernetes.Interface, ns, clusterID, self string) ([]string, error) {
	var deleted []string
	var errs []error
	// A client deletes in the background: a garbage collector, where one runs, removes the
	// dependents too. The AM removing its own cluster orphans them instead: otherwise the
	// collector would take its Role (and its own pod) before it is done.
	policy := metav1.DeletePropagationBackground
	if self != "" {
		policy = metav1.DeletePropagationOrphan
	}
	opts := metav1.DeleteOptions{PropagationPolicy: &policy}
	del := func(kind, name string, get func() (map[string]string, error), remove func() error) {
		lbl, err := get()
		if apierrors.IsNotFound(err) {
			return
		}
		if err != nil {
			errs = append(errs, describe(err, "get", kind, ns, name))
			return
		}
		if !ownedByCluster(lbl, clusterID) {
			return
		}
		if err := remove(); err != nil && !apierrors.IsNotFound(err) {
			errs = append(errs, describe(err, "delete", kind, ns, name))
			return
		}
		deleted = append(deleted, kind+"/"+name)
	}
	core, apps, rbac := cs.CoreV1(), cs.AppsV1(), cs.RbacV1()
	name := DeploymentName(clusterID)
	del("Deployment", name, func() (map[string]string, error) {
		d, err := apps.Deployments(ns).Get(ctx, name, metav1.GetOptions{})
		if err != nil {
			return nil, err
		}
		return d.Labels, nil
	}, func() error { return apps.Deployments(ns).Delete(ctx, name, opts) })

	sel := labels.SelectorFromSet(ClusterLabels(clusterID)).String()
	if rss, err := apps.ReplicaSets(ns).List(ctx, metav1.ListOptions{LabelSelector: sel}); err != nil {
		errs = append(errs, describe(err, "list", "ReplicaSet", ns, sel))
	} else {
		for _, rs := range rss.Items {
			if err := apps.ReplicaSets(ns).Delete(ctx, rs.Name, opts); err != nil && !apierrors.IsNotFound(err) {
				errs = append(errs, describe(err, "delete", "ReplicaSet", ns, rs.Name))
			} else {
				deleted = append(deleted, "ReplicaSet/"+rs.Name)
			}
		}
	}
	svc := ServiceName(clusterID)
	del("Service", svc, func() (map[string]string, error) {
		o, err := core.Services(ns).Get(ctx, svc, metav1.GetOptions{})
		if err != nil {
			return nil, err
		}
		return o.Labels, nil
	}, func() error { return core.Services(ns).Delete(ctx, svc, opts) })
	sec := SecretName(clusterID)
	del("Secret", sec, func() (map[string]string, error) {
		o, err := core.Secrets(ns).Get(ctx, sec, metav1.GetOptions{})
		if err != nil {
			return nil, err
		}
		return o.Labels, nil
	}, func() error { return core.Secrets(ns).Delete(ctx, sec, opts) })
	for _, cm := range []string{ConfigMapName(clusterID), StatusConfigMapName(clusterID)} {
		del("ConfigMap", cm, func() (map[string]string, error) {
			o, err := core.ConfigMaps(ns).Get(ctx, cm, metav1.GetOptions{})
			if err != nil {
				return nil, err
			}
			return o.Labels, nil
		}, func() error { return core.ConfigMaps(ns).Delete(ctx, cm, opts) })
	}

	pods, err := core.Pods(ns).List(ctx, metav1.ListOptions{LabelSelector: sel})
	if err != nil {
		errs = append(errs, describe(err, "list", "Pod", ns, sel))
	} else {
		items := pods.Items
		// TaskManagers first, then the AM pods, the caller's own last.
		rank := func(i int) int {
			switch {
			case items[i].Name == self:
				return 2
			case items[i].Labels[LabelComponent] == ComponentJobManager:
				return 1
			}
			return 0
		}
		sort.SliceStable(items, func(i, j int) bool { return rank(i) < rank(j) })
		for _, p := range items {
			if err := core.Pods(ns).Delete(ctx, p.Name, metav1.DeleteOptions{}); err != nil && !apierrors.IsNotFound(err) {
				errs = append(errs, describe(err, "delete", "Pod", ns, p.Name))
			} else {
				deleted = append(deleted, "Pod/"+p.Name)
			}
		}
	}

	// The AM removing its own cluster deletes only the ServiceAccount, last, and in the
	// background: deleting the RoleBinding or the Role would take its rights to delete the
	// rest, and the account owns both, so the garbage collector takes them after it.
	role := RoleName(clusterID)
	if self != "" {
		background := metav1.DeletePropagationBackground
		opts = metav1.DeleteOptions{PropagationPolicy: &background}
	} else {
		del("RoleBinding", role, func() (map[string]string, error) {
			o, err := rbac.RoleBindings(ns).Get(ctx, role, metav1.GetOptions{})
			if err != nil {
				return nil, err
			}
			return o.Labels, nil
		}, func() error { return rbac.RoleBindings(ns).Delete(ctx, role, opts) })
		del("Role", role, func() (map[string]string, error) {
			o, err := rbac.Roles(ns).Get(ctx, role, metav1.GetOptions{})
			if err != nil {
				return nil, err
			}
			return o.Labels, nil
		}, func() error { return rbac.Roles(ns).Delete(ctx, role, opts) })
	}
	// tide names the account it makes after the cluster; one the user named has no labels.
	del("ServiceAccount", clusterID, func() (map[string]string, error) {
		o, err := core.ServiceAccounts(ns).Get(ctx, clusterID, metav1.GetOptions{})
		if err != nil {
			return nil, err
		}
		return o.Labels, nil
	}, func() error { return core.ServiceAccounts(ns).Delete(ctx, clusterID, opts) })
	if err := errors.Join(errs...); err != nil {
		return deleted, fmt.Errorf("removing cluster %s from namespace %s: %w", clusterID, ns, err)
	}
	return deleted, nil
}

// Leftovers lists the objects of a cluster that still exist, "Kind/name" each (pods that
// are terminating included).
func Leftovers(ctx context.Context, cs kubernetes.Interface, ns, clusterID string) ([]string, error) {
	sel := metav1.ListOptions{LabelSelector: labels.SelectorFromSet(ClusterLabels(clusterID)).String()}
	var out []string
	var errs []error
	add := func(kind string, names []string, err error) {
		if err != nil {
			errs = append(errs, describe(err, "list", kind, ns, sel.LabelSelector))
		}
		for _, n := range names {
			out = append(out, kind+"/"+n)
		}
	}
	d, err := cs.AppsV1().Deployments(ns).List(ctx, sel)
	add("Deployment", namesOf(d, err, func() []string {
		var n []string
		for _, o := range d.Items {
			n = append(n, o.Name)
		}
		return n
	}), err)
	rs, err := cs.AppsV1().ReplicaSets(ns).List(ctx, sel)
	add("ReplicaSet", namesOf(rs, err, func() []string {
		var n []string
		for _, o := range rs.Items {
			n = append(n, o.Name)
		}
		return n
	}), err)
	p, err := cs.CoreV1().Pods(ns).List(ctx, sel)
	add("Pod", namesOf(p, err, func() []string {
		var n []string
		for _, o := range p.Items {
			n = append(n, o.Name)
		}
		return n
	}), err)
	svc, err := cs.CoreV1().Services(ns).List(ctx, sel)
	add("Service", namesOf(svc, err, func() []string {
		var n []string
		for _, o := range svc.Items {
			n = append(n, o.Name)
		}
		return n
	}), err)
	cm, err := cs.CoreV1().ConfigMaps(ns).List(ctx, sel)
	add("ConfigMap", namesOf(cm, err, func() []string {
		var n []string
		for _, o := range cm.Items {
			n = append(n, o.Name)
		}
		return n
	}), err)
	sec, err := cs.CoreV1().Secrets(ns).List(ctx, sel)
	add("Secret", namesOf(sec, err, func() []string {
		var n []string
		for _, o := range sec.Items {
			n = append(n, o.Name)
		}
		return n
	}), err)
	sa, err := cs.CoreV1().ServiceAccounts(ns).List(ctx, sel)
	add("ServiceAccount", namesOf(sa, err, func() []string {
		var n []string
		for _, o := range sa.Items {
			n = append(n, o.Name)
		}
		return n
	}), err)
	r, err := cs.RbacV1().Roles(ns).List(ctx, sel)
	add("Role", namesOf(r, err, func() []string {
		var n []string
		for _, o := range r.Items {
			n = append(n, o.Name)
		}
		return n
	}), err)
	rb, err := cs.RbacV1().RoleBindings(ns).List(ctx, sel)
	add("RoleBinding", namesOf(rb, err, func() []string {
		var n []string
		for _, o := range rb.Items {
			n = append(n, o.Name)
		}
		return n
	}), err)
	sort.Strings(out)
	return out, errors.Join(errs...)
}

// namesOf runs names when the list call succeeded.
func namesOf[T any](list *T, err error, names func() []string) []string {
	if err != nil || list == nil {
		return nil
	}
	return names()
}
