package kube

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"net"
	"strconv"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/util/retry"
)

// PublishStatus merges fields into the cluster's status ConfigMap, creating it (owned by
// the Deployment owner, when there is one) if needed. The AM publishes its REST and RPC
// addresses there when it starts: the client reads the REST address (the Service is not
// reachable from outside the cluster unless exposed), the TaskManagers the RPC address
// (their AM address file).
func PublishStatus(ctx context.Context, cs kubernetes.Interface, ns, clusterID string, owner *appsv1.Deployment, fields map[string]string) error {
	_, err := mergeStatus(ctx, cs, ns, clusterID, fields, func() *corev1.ConfigMap {
		cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: StatusConfigMapName(clusterID), Namespace: ns, Labels: ClusterLabels(clusterID)}}
		if owner != nil {
			cm.OwnerReferences = []metav1.OwnerReference{ownerRef(owner)}
		}
		return cm
	})
	return err
}

// UpdateStatus merges fields into the status ConfigMap only if it is there, and reports
// whether it was. The AM publishes the job's end this way before it removes the cluster:
// tide cancel removes the cluster at the same time, and a ConfigMap created again after
// its delete would have no owner and, once the AM's rights are gone, nobody to remove it.
func UpdateStatus(ctx context.Context, cs kubernetes.Interface, ns, clusterID string, fields map[string]string) (bool, error) {
	return mergeStatus(ctx, cs, ns, clusterID, fields, nil)
}

// mergeStatus merges fields into the status ConfigMap, retrying on conflicts; a missing
// ConfigMap is created from create, or left missing (false) when create is nil.
func mergeStatus(ctx context.Context, cs kubernetes.Interface, ns, clusterID string, fields map[string]string, create func() *corev1.ConfigMap) (bool, error) {
	name := StatusConfigMapName(clusterID)
	cms := cs.CoreV1().ConfigMaps(ns)
	found := true
	err := retry.RetryOnConflict(retry.DefaultRetry, func() error {
		cm, err := cms.Get(ctx, name, metav1.GetOptions{})
		if apierrors.IsNotFound(err) {
			if found = false; create == nil {
				return nil
			}
			cm = create()
			cm.Data = maps.Clone(fields)
			if _, err = cms.Create(ctx, cm, metav1.CreateOptions{}); err != nil {
				if apierrors.IsAlreadyExists(err) {
					return apierrors.NewConflict(corev1.Resource("configmaps"), name, err)
				}
				return describe(err, "create", "ConfigMap", ns, name)
			}
			return nil
		}
		if err != nil {
			return describe(err, "get", "ConfigMap", ns, name)
		}
		found = true
		if cm.Data == nil {
			cm.Data = map[string]string{}
		}
		maps.Copy(cm.Data, fields)
		if _, err := cms.Update(ctx, cm, metav1.UpdateOptions{}); err != nil {
			if apierrors.IsConflict(err) {
				return err
			}
			if apierrors.IsNotFound(err) && create == nil {
				found = false
				return nil
			}
			return describe(err, "update", "ConfigMap", ns, name)
		}
		return nil
	})
	return found, err
}

// ReadStatus returns the status ConfigMap's data (nil, nil when there is none yet).
func ReadStatus(ctx context.Context, cs kubernetes.Interface, ns, clusterID string) (map[string]string, error) {
	cm, err := cs.CoreV1().ConfigMaps(ns).Get(ctx, StatusConfigMapName(clusterID), metav1.GetOptions{})
	if apierrors.IsNotFound(err) {
		return nil, nil
	}
	if err != nil {
		return nil, describe(err, "get", "ConfigMap", ns, StatusConfigMapName(clusterID))
	}
	return cm.Data, nil
}

// ErrNoAddress: the cluster has no REST address (yet).
var ErrNoAddress = errors.New("no REST address")

// RESTAddress is where a client outside the cluster reaches the AM's REST API: the Service's
// address when it is exposed (NodePort: a node's address and the node port; LoadBalancer:
// its ingress), otherwise the address the AM published (its pod's IP, which a client
// outside the cluster reaches only through kubectl port-forward, as with Flink).
func RESTAddress(ctx context.Context, cs kubernetes.Interface, ns, clusterID string) (string, error) {
	svc, err := cs.CoreV1().Services(ns).Get(ctx, ServiceName(clusterID), metav1.GetOptions{})
	if err != nil && !apierrors.IsNotFound(err) {
		return "", describe(err, "get", "Service", ns, ServiceName(clusterID))
	}
	if err == nil {
		switch svc.Spec.Type {
		case corev1.ServiceTypeLoadBalancer:
			for _, in := range svc.Status.LoadBalancer.Ingress {
				host := in.IP
				if host == "" {
					host = in.Hostname
				}
				if host != "" {
					return net.JoinHostPort(host, strconv.Itoa(int(restPort(svc).Port))), nil
				}
			}
			return "", fmt.Errorf("Service %s is a LoadBalancer without an ingress address yet: %w", svc.Name, ErrNoAddress)
		case corev1.ServiceTypeNodePort:
			host, err := nodeAddress(ctx, cs, ns, clusterID)
			if err != nil {
				return "", err
			}
			return net.JoinHostPort(host, strconv.Itoa(int(restPort(svc).NodePort))), nil
		}
	}
	st, err := ReadStatus(ctx, cs, ns, clusterID)
	if err != nil {
		return "", err
	}
	if a := st[StatusRESTAddress]; a != "" {
		return a, nil
	}
	return "", fmt.Errorf("cluster %s in namespace %s: the AM has not published its REST address yet: %w", clusterID, ns, ErrNoAddress)
}

func restPort(svc *corev1.Service) corev1.ServicePort {
	for _, p := range svc.Spec.Ports {
		if p.Name == "rest" {
			return p
		}
	}
	return corev1.ServicePort{}
}

// nodeAddress is an address of the node the AM pod runs on.
func nodeAddress(ctx context.Context, cs kubernetes.Interface, ns, clusterID string) (string, error) {
	pod, err := CurrentAMPod(ctx, cs, ns, clusterID)
	if err != nil {
		return "", err
	}
	if pod == nil || pod.Spec.NodeName == "" {
		return "", fmt.Errorf("cluster %s: no scheduled AM pod for its NodePort Service: %w", clusterID, ErrNoAddress)
	}
	node, err := cs.CoreV1().Nodes().Get(ctx, pod.Spec.NodeName, metav1.GetOptions{})
	if err != nil {
		return "", describe(err, "get", "Node", "", pod.Spec.NodeName)
	}
	for _, t := range []corev1.NodeAddressType{corev1.NodeExternalIP, corev1.NodeInternalIP, corev1.NodeHostName} {
		for _, a := range node.Status.Addresses {
			if a.Type == t && a.Address != "" {
				return a.Address, nil
			}
		}
	}
	return "", fmt.Errorf("node %s has no address for the NodePort Service: %w", node.Name, ErrNoAddress)
}

// CurrentAMPod is the newest AM pod of the cluster that is not being deleted (nil when
// there is none).
func CurrentAMPod(ctx context.Context, cs kubernetes.Interface, ns, clusterID string) (*corev1.Pod, error) {
	pods, err := cs.CoreV1().Pods(ns).List(ctx, metav1.ListOptions{LabelSelector: AMSelector(clusterID)})
	if err != nil {
		return nil, describe(err, "list", "Pod", ns, AMSelector(clusterID))
	}
	var best *corev1.Pod
	for i := range pods.Items {
		p := &pods.Items[i]
		if p.DeletionTimestamp != nil {
			continue
		}
		if best == nil || p.CreationTimestamp.After(best.CreationTimestamp.Time) ||
			(p.CreationTimestamp.Equal(&best.CreationTimestamp) && p.Name > best.Name) {
			best = p
		}
	}
	return best, nil
}

// AMSelector selects a cluster's AM pods.
func AMSelector(clusterID string) string {
	return AMLabels(clusterID).String()
}

// RESTToken reads the AM's REST token from the cluster's Secret.
func RESTToken(ctx context.Context, cs kubernetes.Interface, ns, clusterID string) (string, error) {
	s, err := cs.CoreV1().Secrets(ns).Get(ctx, SecretName(clusterID), metav1.GetOptions{})
	if err != nil {
		return "", describe(err, "get", "Secret", ns, SecretName(clusterID))
	}
	return string(s.Data[SecretKeyRESTToken]), nil
}
