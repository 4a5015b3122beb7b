package kubelet

import (
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
)

// errNotReady marks a volume or env source that does not exist yet (a ConfigMap created
// after the pod): the pod waits in ContainerCreating, as on a real kubelet.
type errNotReady struct{ msg string }

func (e errNotReady) Error() string { return e.msg }

// volumeDir is the host directory of volume name of the pod whose dir is podDir.
func volumeDir(podDir, name string) string { return filepath.Join(podDir, "volumes", name) }

// syncVolumes materializes every volume of p under podDir (again: a changed ConfigMap or
// Secret is swapped in).
func (k *Kubelet) syncVolumes(p *corev1.Pod, podDir string) error {
	for _, v := range p.Spec.Volumes {
		dir := volumeDir(podDir, v.Name)
		var files map[string]volumeFile
		var err error
		switch {
		case v.EmptyDir != nil:
			if err := os.MkdirAll(dir, 0o777); err != nil {
				return err
			}
			continue
		case v.ConfigMap != nil:
			files, err = k.configMapFiles(p.Namespace, v.ConfigMap)
		case v.Secret != nil:
			files, err = k.secretFiles(p.Namespace, v.Secret)
		case v.DownwardAPI != nil:
			files, err = downwardFiles(p, v.DownwardAPI)
		default:
			return fmt.Errorf("volume %s: only configMap, secret, downwardAPI and emptyDir volumes are supported by the test kubelet", v.Name)
		}
		if err != nil {
			return fmt.Errorf("volume %s: %w", v.Name, err)
		}
		changed, err := writeAtomic(dir, files)
		if err != nil {
			return fmt.Errorf("volume %s: writing %s: %w", v.Name, dir, err)
		}
		if changed {
			k.log.Debug("volume updated", "pod", p.Namespace+"/"+p.Name, "volume", v.Name, "dir", dir)
		}
	}
	return nil
}

// keyFiles turns data (key -> bytes) into volume files, through items when given.
func keyFiles(kind, name string, data map[string][]byte, items []corev1.KeyToPath, defaultMode *int32, optional bool) (map[string]volumeFile, error) {
	mode := os.FileMode(0o644)
	if defaultMode != nil {
		mode = os.FileMode(*defaultMode)
	}
	files := map[string]volumeFile{}
	if len(items) == 0 {
		keys := make([]string, 0, len(data))
		for k := range data {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		for _, k := range keys {
			files[k] = volumeFile{data: data[k], mode: mode}
		}
		return files, nil
	}
	for _, it := range items {
		b, ok := data[it.Key]
		if !ok {
			if optional {
				continue
			}
			return nil, errNotReady{fmt.Sprintf("%s %s has no key %q", kind, name, it.Key)}
		}
		m := mode
		if it.Mode != nil {
			m = os.FileMode(*it.Mode)
		}
		files[it.Path] = volumeFile{data: b, mode: m}
	}
	return files, nil
}

func (k *Kubelet) configMapFiles(ns string, src *corev1.ConfigMapVolumeSource) (map[string]volumeFile, error) {
	optional := src.Optional != nil && *src.Optional
	cm, err := k.configMaps.ConfigMaps(ns).Get(src.Name)
	if apierrors.IsNotFound(err) {
		if optional {
			return map[string]volumeFile{}, nil
		}
		return nil, errNotReady{fmt.Sprintf("configmap %q not found", src.Name)}
	}
	if err != nil {
		return nil, err
	}
	data := map[string][]byte{}
	for key, v := range cm.Data {
		data[key] = []byte(v)
	}
	for key, v := range cm.BinaryData {
		data[key] = v
	}
	return keyFiles("configmap", src.Name, data, src.Items, src.DefaultMode, optional)
}

func (k *Kubelet) secretFiles(ns string, src *corev1.SecretVolumeSource) (map[string]volumeFile, error) {
	optional := src.Optional != nil && *src.Optional
	s, err := k.secrets.Secrets(ns).Get(src.SecretName)
	if apierrors.IsNotFound(err) {
		if optional {
			return map[string]volumeFile{}, nil
		}
		return nil, errNotReady{fmt.Sprintf("secret %q not found", src.SecretName)}
	}
	if err != nil {
		return nil, err
	}
	data := map[string][]byte{}
	for key, v := range s.Data {
		data[key] = v
	}
	for key, v := range s.StringData {
		data[key] = []byte(v)
	}
	return keyFiles("secret", src.SecretName, data, src.Items, src.DefaultMode, optional)
}

// downwardFiles supports fieldRef items (resourceFieldRef items too, through the same
// resolver as env values).
func downwardFiles(p *corev1.Pod, src *corev1.DownwardAPIVolumeSource) (map[string]volumeFile, error) {
	mode := os.FileMode(0o644)
	if src.DefaultMode != nil {
		mode = os.FileMode(*src.DefaultMode)
	}
	files := map[string]volumeFile{}
	for _, it := range src.Items {
		var v string
		var err error
		switch {
		case it.FieldRef != nil:
			v, err = podField(p, it.FieldRef.FieldPath, true)
		case it.ResourceFieldRef != nil:
			c := findContainer(p, it.ResourceFieldRef.ContainerName)
			if c == nil {
				return nil, fmt.Errorf("item %s: no container %q", it.Path, it.ResourceFieldRef.ContainerName)
			}
			v, err = resourceField(c, it.ResourceFieldRef)
		default:
			return nil, fmt.Errorf("item %s: no fieldRef or resourceFieldRef", it.Path)
		}
		if err != nil {
			return nil, fmt.Errorf("item %s: %w", it.Path, err)
		}
		m := mode
		if it.Mode != nil {
			m = os.FileMode(*it.Mode)
		}
		files[it.Path] = volumeFile{data: []byte(v), mode: m}
	}
	return files, nil
}

func findContainer(p *corev1.Pod, name string) *corev1.Container {
	for i := range p.Spec.Containers {
		if p.Spec.Containers[i].Name == name || (name == "" && i == 0) {
			return &p.Spec.Containers[i]
		}
	}
	return nil
}

// mounts returns the container's mount paths and their host dirs.
func mounts(c *corev1.Container, podDir string) []mount {
	var out []mount
	for _, vm := range c.VolumeMounts {
		host := volumeDir(podDir, vm.Name)
		if vm.SubPath != "" {
			host = filepath.Join(host, strings.TrimLeft(vm.SubPath, "/"))
		}
		out = append(out, mount{container: vm.MountPath, host: host})
	}
	return out
}
