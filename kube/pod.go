package kube

import (
	"fmt"
	"sort"
	"strconv"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// Environment variables of a TaskManager container. EnvPodNodeID comes from the downward
// API (spec.nodeName), so the node id a TaskManager reports is the Kubernetes node name the
// blocklist and the NotIn term use.
const (
	EnvPodNodeID = "TIDE_POD_NODE_ID"
	EnvPodIP     = "TIDE_POD_IP"
	EnvPodName   = "TIDE_POD_NAME"
	// EnvAMAddressPath is the path of the file naming the AM's RPC address (the status
	// ConfigMap's rpc-address, mounted at StatusDir); the TaskManager follows it across AM
	// restarts as tm/worker's AM address file. A plain path, as mount paths are written.
	EnvAMAddressPath = "TIDE_AM_ADDRESS_PATH"
)

// containerName is the TaskManager container's name in every pod.
const containerName = "taskmanager"

// configMapName is the ConfigMap holding flink-conf.yaml that pods mount at the conf dir.
func configMapName(clusterID string) string { return "tide-config-" + clusterID }

// PodSpec is everything a TaskManager pod is built from besides its name and the blocked nodes.
type PodSpec struct {
	ClusterID      string
	Image          string
	PullPolicy     corev1.PullPolicy
	ServiceAccount string
	// NodeNameLabel is kubernetes.node-name-label, the key of the NotIn requirement.
	NodeNameLabel string
	// Command is the tide binary and its first arguments (the pod runs Command, then
	// "taskmanager" and its flags).
	Command []string
	ConfDir string
	CPU     float64
	// MemoryMB is taskmanager.memory.process.size in MiB (request and limit).
	MemoryMB int64
	AMHost   string
	AMPort   int
	JobID    string
	AMRun    string
	// Owner is the AM's pod (or Deployment): TaskManager pods go with it.
	Owner *metav1.OwnerReference
	// Env is extra environment for every TaskManager container.
	Env map[string]string
	// InCluster: the AM runs from a cluster's Deployment (tide run --target
	// kubernetes-application). TaskManagers then take the internal secret from the
	// cluster's Secret and follow the AM's address through the status ConfigMap, mounted
	// at StatusDir, across AM restarts.
	InCluster bool
}

// NodeAffinity is the one required term keeping a pod off blocked nodes:
// `<label> NotIn [values]` with values sorted; nil when nothing is blocked (the API
// rejects an empty NotIn list).
func NodeAffinity(label string, blocked []string) *corev1.Affinity {
	if len(blocked) == 0 {
		return nil
	}
	vals := append([]string(nil), blocked...)
	sort.Strings(vals)
	return &corev1.Affinity{NodeAffinity: &corev1.NodeAffinity{
		RequiredDuringSchedulingIgnoredDuringExecution: &corev1.NodeSelector{
			NodeSelectorTerms: []corev1.NodeSelectorTerm{{
				MatchExpressions: []corev1.NodeSelectorRequirement{{
					Key: label, Operator: corev1.NodeSelectorOpNotIn, Values: vals,
				}},
			}},
		},
	}}
}

// excludedValues returns the NotIn values of a pod built by NodeAffinity (nil without one).
func excludedValues(p *corev1.Pod, label string) []string {
	a := p.Spec.Affinity
	if a == nil || a.NodeAffinity == nil || a.NodeAffinity.RequiredDuringSchedulingIgnoredDuringExecution == nil {
		return nil
	}
	var out []string
	for _, t := range a.NodeAffinity.RequiredDuringSchedulingIgnoredDuringExecution.NodeSelectorTerms {
		for _, r := range t.MatchExpressions {
			if r.Key == label && r.Operator == corev1.NodeSelectorOpNotIn {
				out = append(out, r.Values...)
			}
		}
	}
	return out
}

// Build returns TaskManager pod name of attempt, kept off the nodes whose
// node-name-label values are blocked.
func (s PodSpec) Build(name string, attempt int, blocked []string) (*corev1.Pod, error) {
	cpu := s.CPU
	if cpu <= 0 {
		return nil, fmt.Errorf("TaskManager pod %s: cpu %v must be positive", name, cpu)
	}
	if s.MemoryMB <= 0 {
		return nil, fmt.Errorf("TaskManager pod %s: memory %d MiB must be positive", name, s.MemoryMB)
	}
	lbl := Selector(s.ClusterID)
	lbl[LabelAttempt] = strconv.Itoa(attempt)
	if s.JobID != "" {
		lbl[LabelJob] = s.JobID
	}
	if s.AMRun != "" {
		lbl[LabelAMRun] = s.AMRun
	}
	args := append([]string(nil), s.Command[1:]...)
	args = append(args, "taskmanager", "--configDir", s.ConfDir, "--resource-id", name, "--host", "$("+EnvPodIP+")",
		"-Djobmanager.rpc.address="+s.AMHost,
		"-Djobmanager.rpc.port="+strconv.Itoa(s.AMPort),
		"-Dtaskmanager.node-id=$("+EnvPodNodeID+")")
	env := []corev1.EnvVar{
		{Name: EnvPodNodeID, ValueFrom: &corev1.EnvVarSource{FieldRef: &corev1.ObjectFieldSelector{APIVersion: "v1", FieldPath: "spec.nodeName"}}},
		{Name: EnvPodIP, ValueFrom: &corev1.EnvVarSource{FieldRef: &corev1.ObjectFieldSelector{APIVersion: "v1", FieldPath: "status.podIP"}}},
		{Name: EnvPodName, ValueFrom: &corev1.EnvVarSource{FieldRef: &corev1.ObjectFieldSelector{APIVersion: "v1", FieldPath: "metadata.name"}}},
	}
	keys := make([]string, 0, len(s.Env))
	for k := range s.Env {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		env = append(env, corev1.EnvVar{Name: k, Value: s.Env[k]})
	}
	mounts := []corev1.VolumeMount{{Name: "tide-config", MountPath: s.ConfDir, ReadOnly: true}}
	optional := true
	volumes := []corev1.Volume{{Name: "tide-config", VolumeSource: corev1.VolumeSource{ConfigMap: &corev1.ConfigMapVolumeSource{
		LocalObjectReference: corev1.LocalObjectReference{Name: configMapName(s.ClusterID)}, Optional: &optional,
	}}}}
	if s.InCluster {
		env = append(env, secretEnv(s.ClusterID),
			corev1.EnvVar{Name: EnvAMAddressPath, Value: StatusDir + "/" + StatusRPCAddress})
		mounts = append(mounts, corev1.VolumeMount{Name: "tide-status", MountPath: StatusDir, ReadOnly: true})
		volumes = append(volumes, corev1.Volume{Name: "tide-status", VolumeSource: corev1.VolumeSource{ConfigMap: &corev1.ConfigMapVolumeSource{
			LocalObjectReference: corev1.LocalObjectReference{Name: StatusConfigMapName(s.ClusterID)}, Optional: &optional,
		}}})
	}
	res := corev1.ResourceList{
		corev1.ResourceCPU:    *resource.NewMilliQuantity(int64(cpu*1000+0.5), resource.DecimalSI),
		corev1.ResourceMemory: *resource.NewQuantity(s.MemoryMB<<20, resource.BinarySI),
	}
	p := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: name, Labels: lbl},
		Spec: corev1.PodSpec{
			RestartPolicy:      corev1.RestartPolicyNever,
			ServiceAccountName: s.ServiceAccount,
			Affinity:           NodeAffinity(s.NodeNameLabel, blocked),
			Containers: []corev1.Container{{
				Name: containerName, Image: s.Image, ImagePullPolicy: s.PullPolicy,
				Command: []string{s.Command[0]}, Args: args, Env: env,
				Resources:    corev1.ResourceRequirements{Requests: res, Limits: res},
				VolumeMounts: mounts,
			}},
			Volumes: volumes,
		},
	}
	if s.Owner != nil {
		p.OwnerReferences = []metav1.OwnerReference{*s.Owner}
	}
	return p, nil
}
