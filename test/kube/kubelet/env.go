package kubelet

import (
	"fmt"
	"math"
	"sort"
	"strconv"
	"strings"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
)

// hostIP is the address of every node and pod: everything runs on this machine's loopback.
const hostIP = "127.0.0.1"

// podField resolves a downward-API field path. Labels and annotations as a whole are only
// allowed in volumes (inVolume).
func podField(p *corev1.Pod, path string, inVolume bool) (string, error) {
	switch path {
	case "metadata.name":
		return p.Name, nil
	case "metadata.namespace":
		return p.Namespace, nil
	case "metadata.uid":
		return string(p.UID), nil
	case "spec.nodeName":
		return p.Spec.NodeName, nil
	case "spec.serviceAccountName":
		return p.Spec.ServiceAccountName, nil
	case "status.podIP", "status.hostIP":
		return hostIP, nil
	case "status.podIPs", "status.hostIPs":
		return hostIP, nil
	case "metadata.labels", "metadata.annotations":
		if !inVolume {
			return "", fmt.Errorf("field %s is only available in downwardAPI volumes", path)
		}
		m := p.Labels
		if path == "metadata.annotations" {
			m = p.Annotations
		}
		keys := make([]string, 0, len(m))
		for k := range m {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		var b strings.Builder
		for _, k := range keys {
			fmt.Fprintf(&b, "%s=%q\n", k, m[k])
		}
		return b.String(), nil
	}
	for _, pre := range []string{"metadata.labels['", "metadata.annotations['"} {
		if rest, ok := strings.CutPrefix(path, pre); ok {
			key, ok := strings.CutSuffix(rest, "']")
			if !ok {
				break
			}
			if pre == "metadata.labels['" {
				return p.Labels[key], nil
			}
			return p.Annotations[key], nil
		}
	}
	return "", fmt.Errorf("field path %q is not supported by the test kubelet", path)
}

// resourceField resolves a resourceFieldRef as the kubelet does: the value divided by the
// divisor (default 1), rounded up. An unset limit reads as the request (a real kubelet
// would give the node's allocatable); neither set is an error.
func resourceField(c *corev1.Container, ref *corev1.ResourceFieldSelector) (string, error) {
	kind, name, ok := strings.Cut(ref.Resource, ".")
	if !ok || (kind != "limits" && kind != "requests") {
		return "", fmt.Errorf("resource %q: want limits.<name> or requests.<name>", ref.Resource)
	}
	list := c.Resources.Limits
	if kind == "requests" {
		list = c.Resources.Requests
	}
	q, ok := list[corev1.ResourceName(name)]
	if !ok && kind == "limits" {
		q, ok = c.Resources.Requests[corev1.ResourceName(name)]
	}
	if !ok {
		return "", fmt.Errorf("resource %q of container %s is not set (the test kubelet has no node allocatable to fall back on)", ref.Resource, c.Name)
	}
	div := ref.Divisor
	if div.IsZero() {
		div = resource.MustParse("1")
	}
	if name == "cpu" {
		v := math.Ceil(float64(q.MilliValue()) / float64(div.MilliValue()))
		return strconv.FormatInt(int64(v), 10), nil
	}
	v := math.Ceil(float64(q.Value()) / float64(div.Value()))
	return strconv.FormatInt(int64(v), 10), nil
}

// containerEnv resolves the container's environment in order: envFrom, then env (each value
// may refer to the ones before it with $(NAME)).
func (k *Kubelet) containerEnv(p *corev1.Pod, c *corev1.Container) ([]string, map[string]string, error) {
	vals := map[string]string{}
	var order []string
	set := func(name, v string) {
		if _, ok := vals[name]; !ok {
			order = append(order, name)
		}
		vals[name] = v
	}
	for _, ef := range c.EnvFrom {
		var data map[string]string
		switch {
		case ef.ConfigMapRef != nil:
			cm, err := k.configMaps.ConfigMaps(p.Namespace).Get(ef.ConfigMapRef.Name)
			if err != nil {
				if apierrors.IsNotFound(err) && ef.ConfigMapRef.Optional != nil && *ef.ConfigMapRef.Optional {
					continue
				}
				return nil, nil, errNotReady{fmt.Sprintf("envFrom configmap %q: %v", ef.ConfigMapRef.Name, err)}
			}
			data = cm.Data
		case ef.SecretRef != nil:
			s, err := k.secrets.Secrets(p.Namespace).Get(ef.SecretRef.Name)
			if err != nil {
				if apierrors.IsNotFound(err) && ef.SecretRef.Optional != nil && *ef.SecretRef.Optional {
					continue
				}
				return nil, nil, errNotReady{fmt.Sprintf("envFrom secret %q: %v", ef.SecretRef.Name, err)}
			}
			data = map[string]string{}
			for key, b := range s.Data {
				data[key] = string(b)
			}
		}
		keys := make([]string, 0, len(data))
		for key := range data {
			keys = append(keys, key)
		}
		sort.Strings(keys)
		for _, key := range keys {
			set(ef.Prefix+key, data[key])
		}
	}
	lookup := func(name string) (string, bool) { v, ok := vals[name]; return v, ok }
	for _, e := range c.Env {
		if e.ValueFrom == nil {
			set(e.Name, expand(e.Value, lookup))
			continue
		}
		src := e.ValueFrom
		switch {
		case src.FieldRef != nil:
			v, err := podField(p, src.FieldRef.FieldPath, false)
			if err != nil {
				return nil, nil, fmt.Errorf("env %s: %w", e.Name, err)
			}
			set(e.Name, v)
		case src.ResourceFieldRef != nil:
			rc := c
			if src.ResourceFieldRef.ContainerName != "" {
				rc = findContainer(p, src.ResourceFieldRef.ContainerName)
				if rc == nil {
					return nil, nil, fmt.Errorf("env %s: no container %q", e.Name, src.ResourceFieldRef.ContainerName)
				}
			}
			v, err := resourceField(rc, src.ResourceFieldRef)
			if err != nil {
				return nil, nil, fmt.Errorf("env %s: %w", e.Name, err)
			}
			set(e.Name, v)
		case src.ConfigMapKeyRef != nil:
			ref := src.ConfigMapKeyRef
			cm, err := k.configMaps.ConfigMaps(p.Namespace).Get(ref.Name)
			v, ok := "", false
			if err == nil {
				v, ok = cm.Data[ref.Key]
			}
			if !ok {
				if ref.Optional != nil && *ref.Optional {
					continue
				}
				return nil, nil, errNotReady{fmt.Sprintf("env %s: configmap %q key %q not found", e.Name, ref.Name, ref.Key)}
			}
			set(e.Name, v)
		case src.SecretKeyRef != nil:
			ref := src.SecretKeyRef
			s, err := k.secrets.Secrets(p.Namespace).Get(ref.Name)
			var b []byte
			ok := false
			if err == nil {
				b, ok = s.Data[ref.Key]
			}
			if !ok {
				if ref.Optional != nil && *ref.Optional {
					continue
				}
				return nil, nil, errNotReady{fmt.Sprintf("env %s: secret %q key %q not found", e.Name, ref.Name, ref.Key)}
			}
			set(e.Name, string(b))
		default:
			return nil, nil, fmt.Errorf("env %s: unsupported valueFrom", e.Name)
		}
	}
	return order, vals, nil
}
