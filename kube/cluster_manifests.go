package kube

import (
	"fmt"
	"sort"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
)

// ClusterSpec is everything a cluster's objects are built from.
type ClusterSpec struct {
	ClusterID  string
	Namespace  string
	Image      string
	PullPolicy corev1.PullPolicy
	// Command is kubernetes.entry.path, the tide binary in the image.
	Command string
	// ConfDir is kubernetes.flink.conf.dir, where the ConfigMap is mounted as a directory.
	ConfDir string
	// ServiceAccount runs the AM and TaskManager pods; CreateRBAC makes it, with a Role and a
	// RoleBinding giving it what the AM needs (false: an existing account the user named).
	ServiceAccount string
	CreateRBAC     bool
	CPU            float64
	MemoryMB       int64
	// RESTPort and RPCPort are the AM's ports (0: a free port, for tests on one machine; the
	// Service then points at the defaults, which nothing listens on).
	RESTPort, RPCPort int
	ExposedType       corev1.ServiceType
	JobName           string
	JobArgs           []string
	// FromSavepoint is where the AM starts the job from (tide run --fromSavepoint) unless
	// state.checkpoints.dir already holds a checkpoint of the job (an AM that restarts);
	// AllowNonRestoredState drops the savepoint's state of vertices the job no longer has.
	FromSavepoint         string
	AllowNonRestoredState bool
	// FlinkConf is flink-conf.yaml as the pods get it (no secrets).
	FlinkConf []byte
	// InternalSecret and RESTToken go into the Secret, nowhere else.
	InternalSecret []byte
	RESTToken      string
	// Env is extra environment of the AM container (containerized.master.env.*, the log level).
	Env map[string]string
}

// ownerRef points at the cluster's Deployment.
func ownerRef(d *appsv1.Deployment) metav1.OwnerReference {
	yes := true
	return metav1.OwnerReference{APIVersion: "apps/v1", Kind: "Deployment", Name: d.Name, UID: d.UID, Controller: &yes, BlockOwnerDeletion: &yes}
}

func (s ClusterSpec) meta(name string) metav1.ObjectMeta {
	return metav1.ObjectMeta{Name: name, Namespace: s.Namespace, Labels: ClusterLabels(s.ClusterID)}
}

// Check refuses a spec that cannot make a cluster.
func (s ClusterSpec) Check() error {
	if err := CheckSubmissionClusterID(s.ClusterID); err != nil {
		return err
	}
	switch {
	case s.Namespace == "":
		return fmt.Errorf("kubernetes.namespace is empty")
	case s.Command == "":
		return fmt.Errorf("kubernetes.entry.path is empty")
	case s.ConfDir == "":
		return fmt.Errorf("kubernetes.flink.conf.dir is empty")
	case s.ServiceAccount == "":
		return fmt.Errorf("kubernetes.service-account is empty")
	case s.CPU <= 0:
		return fmt.Errorf("kubernetes.jobmanager.cpu %v: want a positive number of cores", s.CPU)
	case s.MemoryMB <= 0:
		return fmt.Errorf("jobmanager.memory.process.size %d MiB: want a positive size", s.MemoryMB)
	case s.JobName == "":
		return fmt.Errorf("no job name")
	case len(s.InternalSecret) == 0 || s.RESTToken == "":
		return fmt.Errorf("cluster %s: no internal secret or REST token for its Secret", s.ClusterID)
	}
	return nil
}

// Deployment is the AM: one replica (created with zero, scaled up once the objects it mounts
// exist), restartPolicy Always, the ConfigMap mounted as a directory (no subPath, so an edit
// reaches the file and the AM reloads it) and the Secret as files only the AM reads.
func (s ClusterSpec) Deployment(replicas int32) *appsv1.Deployment {
	lbl := AMLabels(s.ClusterID)
	args := []string{"jobmanager", "--configDir", s.ConfDir, "--job-classname", s.JobName,
		"-D" + "rest.auth.token-file=" + SecretDir + "/" + SecretKeyRESTToken}
	if s.FromSavepoint != "" {
		args = append(args, "--fromSavepoint", s.FromSavepoint)
	}
	if s.AllowNonRestoredState {
		args = append(args, "--allowNonRestoredState")
	}
	if len(s.JobArgs) > 0 {
		args = append(append(args, "--"), s.JobArgs...)
	}
	env := []corev1.EnvVar{
		{Name: EnvAMPod, Value: "1"},
		{Name: EnvAMDeployment, Value: DeploymentName(s.ClusterID)},
		{Name: EnvAMPodName, ValueFrom: fieldRef("metadata.name")},
		{Name: EnvAMPodIP, ValueFrom: fieldRef("status.podIP")},
		{Name: EnvPodNodeID, ValueFrom: fieldRef("spec.nodeName")},
		secretEnv(s.ClusterID),
	}
	keys := make([]string, 0, len(s.Env))
	for k := range s.Env {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		env = append(env, corev1.EnvVar{Name: k, Value: s.Env[k]})
	}
	res := corev1.ResourceList{
		corev1.ResourceCPU:    *resource.NewMilliQuantity(int64(s.CPU*1000+0.5), resource.DecimalSI),
		corev1.ResourceMemory: *resource.NewQuantity(s.MemoryMB<<20, resource.BinarySI),
	}
	var ports []corev1.ContainerPort
	if s.RESTPort > 0 {
		ports = append(ports, corev1.ContainerPort{Name: "rest", ContainerPort: int32(s.RESTPort), Protocol: corev1.ProtocolTCP})
	}
	if s.RPCPort > 0 {
		ports = append(ports, corev1.ContainerPort{Name: "rpc", ContainerPort: int32(s.RPCPort), Protocol: corev1.ProtocolTCP})
	}
	secretMode := int32(0o400)
	d := &appsv1.Deployment{
		ObjectMeta: s.meta(DeploymentName(s.ClusterID)),
		Spec: appsv1.DeploymentSpec{
			Replicas: &replicas,
			Selector: &metav1.LabelSelector{MatchLabels: lbl},
			// One AM at a time: the old pod goes before the new one starts (Flink's choice).
			Strategy: appsv1.DeploymentStrategy{Type: appsv1.RecreateDeploymentStrategyType},
			Template: corev1.PodTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Labels: lbl},
				Spec: corev1.PodSpec{
					RestartPolicy:      corev1.RestartPolicyAlways,
					ServiceAccountName: s.ServiceAccount,
					Containers: []corev1.Container{{
						Name: ComponentJobManager, Image: s.Image, ImagePullPolicy: s.PullPolicy,
						Command: []string{s.Command}, Args: args, Env: env, Ports: ports,
						Resources: corev1.ResourceRequirements{Requests: res, Limits: res},
						VolumeMounts: []corev1.VolumeMount{
							{Name: "tide-config", MountPath: s.ConfDir, ReadOnly: true},
							{Name: "tide-secret", MountPath: SecretDir, ReadOnly: true},
						},
					}},
					Volumes: []corev1.Volume{
						{Name: "tide-config", VolumeSource: corev1.VolumeSource{ConfigMap: &corev1.ConfigMapVolumeSource{
							LocalObjectReference: corev1.LocalObjectReference{Name: ConfigMapName(s.ClusterID)},
						}}},
						{Name: "tide-secret", VolumeSource: corev1.VolumeSource{Secret: &corev1.SecretVolumeSource{
							SecretName: SecretName(s.ClusterID), DefaultMode: &secretMode,
							Items: []corev1.KeyToPath{{Key: SecretKeyRESTToken, Path: SecretKeyRESTToken}},
						}}},
					},
				},
			},
		},
	}
	d.Annotations = map[string]string{AnnotationJobName: s.JobName}
	return d
}

// AnnotationJobName on the Deployment names the job (tide list --target kubernetes).
const AnnotationJobName = "tide.io/job-name"

func fieldRef(path string) *corev1.EnvVarSource {
	return &corev1.EnvVarSource{FieldRef: &corev1.ObjectFieldSelector{APIVersion: "v1", FieldPath: path}}
}

// secretEnv is $TIDE_INTERNAL_SECRET from the cluster's Secret.
func secretEnv(clusterID string) corev1.EnvVar {
	return corev1.EnvVar{Name: EnvInternalSecret, ValueFrom: &corev1.EnvVarSource{SecretKeyRef: &corev1.SecretKeySelector{
		LocalObjectReference: corev1.LocalObjectReference{Name: SecretName(clusterID)}, Key: SecretKeyInternal,
	}}}
}

// ConfigMap holds flink-conf.yaml, which the AM and TaskManager pods mount at ConfDir.
func (s ClusterSpec) ConfigMap(owner *appsv1.Deployment) *corev1.ConfigMap {
	cm := &corev1.ConfigMap{ObjectMeta: s.meta(ConfigMapName(s.ClusterID)), Data: map[string]string{"flink-conf.yaml": string(s.FlinkConf)}}
	cm.OwnerReferences = []metav1.OwnerReference{ownerRef(owner)}
	return cm
}

// Secret holds the internal secret and the REST token.
func (s ClusterSpec) Secret(owner *appsv1.Deployment) *corev1.Secret {
	sec := &corev1.Secret{ObjectMeta: s.meta(SecretName(s.ClusterID)), Type: corev1.SecretTypeOpaque,
		Data: map[string][]byte{SecretKeyInternal: s.InternalSecret, SecretKeyRESTToken: []byte(s.RESTToken)}}
	sec.OwnerReferences = []metav1.OwnerReference{ownerRef(owner)}
	return sec
}

// Service fronts the AM's REST and RPC ports.
func (s ClusterSpec) Service(owner *appsv1.Deployment) *corev1.Service {
	port := func(name string, p, def int) corev1.ServicePort {
		if p <= 0 {
			p = def
		}
		return corev1.ServicePort{Name: name, Port: int32(p), TargetPort: intstr.FromInt32(int32(p)), Protocol: corev1.ProtocolTCP}
	}
	svc := &corev1.Service{ObjectMeta: s.meta(ServiceName(s.ClusterID)), Spec: corev1.ServiceSpec{
		Type:     s.ExposedType,
		Selector: AMLabels(s.ClusterID),
		Ports:    []corev1.ServicePort{port("rest", s.RESTPort, DefaultRESTPort), port("rpc", s.RPCPort, DefaultRPCPort)},
	}}
	svc.OwnerReferences = []metav1.OwnerReference{ownerRef(owner)}
	return svc
}

// ServiceAccount is the AM's (and the TaskManagers') account when tide makes it.
func (s ClusterSpec) ServiceAccountObject(owner *appsv1.Deployment) *corev1.ServiceAccount {
	sa := &corev1.ServiceAccount{ObjectMeta: s.meta(s.ServiceAccount)}
	sa.OwnerReferences = []metav1.OwnerReference{ownerRef(owner)}
	return sa
}

// AMRules are what the AM does in its namespace: create, watch and delete TaskManager pods
// (and find its own), publish its addresses in the status ConfigMap, and remove the
// cluster's objects when the job ends. Listing nodes (to name blocked nodes by their label)
// is cluster-wide and needs a ClusterRole the AM does without: it then keeps pods off the
// blocked nodes its TaskManagers ran on.
func AMRules() []rbacv1.PolicyRule {
	return []rbacv1.PolicyRule{
		{APIGroups: []string{""}, Resources: []string{"pods"}, Verbs: []string{"get", "list", "watch", "create", "delete", "patch", "update"}},
		{APIGroups: []string{""}, Resources: []string{"configmaps"}, Verbs: []string{"get", "list", "watch", "create", "update", "patch", "delete"}},
		{APIGroups: []string{""}, Resources: []string{"services", "secrets", "serviceaccounts"}, Verbs: []string{"get", "delete"}},
		{APIGroups: []string{"apps"}, Resources: []string{"deployments", "replicasets"}, Verbs: []string{"get", "list", "delete"}},
		{APIGroups: []string{"rbac.authorization.k8s.io"}, Resources: []string{"roles", "rolebindings"}, Verbs: []string{"get", "delete"}},
	}
}

// saOwnerRef points at the service account tide made for the cluster.
func saOwnerRef(sa *corev1.ServiceAccount) metav1.OwnerReference {
	yes := true
	return metav1.OwnerReference{APIVersion: "v1", Kind: "ServiceAccount", Name: sa.Name, UID: sa.UID, BlockOwnerDeletion: &yes}
}

// Role grants AMRules in the namespace. The service account owns it (itself owned by the
// Deployment): an AM that removes its cluster deletes the account last, and the garbage
// collector takes the Role and RoleBinding after it (deleting either itself would take the
// AM's rights to delete the rest).
func (s ClusterSpec) Role(owner *corev1.ServiceAccount) *rbacv1.Role {
	r := &rbacv1.Role{ObjectMeta: s.meta(RoleName(s.ClusterID)), Rules: AMRules()}
	r.OwnerReferences = []metav1.OwnerReference{saOwnerRef(owner)}
	return r
}

// RoleBinding gives the Role to the service account, which owns it (see Role).
func (s ClusterSpec) RoleBinding(owner *corev1.ServiceAccount) *rbacv1.RoleBinding {
	rb := &rbacv1.RoleBinding{ObjectMeta: s.meta(RoleName(s.ClusterID)),
		RoleRef:  rbacv1.RoleRef{APIGroup: "rbac.authorization.k8s.io", Kind: "Role", Name: RoleName(s.ClusterID)},
		Subjects: []rbacv1.Subject{{Kind: rbacv1.ServiceAccountKind, Name: s.ServiceAccount, Namespace: s.Namespace}},
	}
	rb.OwnerReferences = []metav1.OwnerReference{saOwnerRef(owner)}
	return rb
}
