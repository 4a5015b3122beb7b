package kube

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"os"
	"strconv"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"

	"github.com/tidestream/tide/conf"
)

// The environment of an AM pod: EnvAMPod marks an AM that runs in a pod and starts its
// TaskManagers as pods; EnvAMPodName is the pod's own name (downward API metadata.name),
// which owns the TaskManager pods.
const (
	EnvAMPod     = "TIDE_KUBERNETES_AM"
	EnvAMPodName = "TIDE_KUBERNETES_AM_POD"
)

// InPod reports whether this AM should use the kube driver.
func InPod() bool { return os.Getenv(EnvAMPod) == "1" }

// ClusterID is kubernetes.cluster-id, or tide-<job name> lower-cased when unset.
func ClusterID(cfg *conf.Config, jobName string) (string, error) {
	if id, ok := conf.KubernetesClusterID.Lookup(cfg); ok && id != "" {
		return id, CheckClusterID(id)
	}
	id := "tide-" + sanitize(jobName)
	if len(id) > MaxClusterIDLength {
		id = id[:MaxClusterIDLength]
	}
	for len(id) > 0 && id[len(id)-1] == '-' {
		id = id[:len(id)-1]
	}
	return id, CheckClusterID(id)
}

func sanitize(s string) string {
	b := make([]byte, 0, len(s))
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c >= 'a' && c <= 'z', c >= '0' && c <= '9':
			b = append(b, c)
		case c >= 'A' && c <= 'Z':
			b = append(b, c+'a'-'A')
		default:
			b = append(b, '-')
		}
	}
	return string(b)
}

// RESTConfig is the in-cluster configuration, or $KUBECONFIG's (~/.kube/config) outside a pod.
func RESTConfig() (*rest.Config, error) {
	if c, err := rest.InClusterConfig(); err == nil {
		return c, nil
	}
	rules := clientcmd.NewDefaultClientConfigLoadingRules()
	c, err := clientcmd.NewNonInteractiveDeferredLoadingClientConfig(rules, &clientcmd.ConfigOverrides{}).ClientConfig()
	if err != nil {
		return nil, fmt.Errorf("no in-cluster Kubernetes configuration and no usable kubeconfig: %w", err)
	}
	return c, nil
}

// driverOwner is the owner of the TaskManager pods: the AM's Deployment when it runs from one
// (the pods outlive an AM pod that is replaced, for the next AM to adopt), else the AM's pod.
func driverOwner(ctx context.Context, client kubernetes.Interface, ns string, log *slog.Logger) (*metav1.OwnerReference, error) {
	octx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	yes := true
	if name := os.Getenv(EnvAMDeployment); name != "" {
		d, err := client.AppsV1().Deployments(ns).Get(octx, name, metav1.GetOptions{})
		if err != nil {
			return nil, fmt.Errorf("the AM's Deployment %s/%s (%s), owner of the TaskManager pods: %w", ns, name, EnvAMDeployment, err)
		}
		return &metav1.OwnerReference{APIVersion: "apps/v1", Kind: "Deployment", Name: d.Name, UID: d.UID, Controller: &yes, BlockOwnerDeletion: &yes}, nil
	}
	if name := os.Getenv(EnvAMPodName); name != "" {
		self, err := client.CoreV1().Pods(ns).Get(octx, name, metav1.GetOptions{})
		if err != nil {
			return nil, fmt.Errorf("the AM's own pod %s/%s (%s), owner of the TaskManager pods: %w", ns, name, EnvAMPodName, err)
		}
		return &metav1.OwnerReference{APIVersion: "v1", Kind: "Pod", Name: self.Name, UID: self.UID, Controller: &yes, BlockOwnerDeletion: &yes}, nil
	}
	log.Warn("the AM does not know its pod: TaskManager pods get no owner and outlive a deleted AM", "env", EnvAMPodName)
	return nil, nil
}

// NewDriverFromConf assembles the kube driver of an AM from the configuration: the
// kubernetes.* keys, the TaskManagers' size, the AM's RPC address and its own pod (the
// owner of every TaskManager pod).
func NewDriverFromConf(ctx context.Context, cfg *conf.Config, client kubernetes.Interface, jobID, jobName, amRun string, rpc net.Addr, log *slog.Logger) (*Driver, error) {
	if log == nil {
		log = slog.Default()
	}
	if client == nil {
		return nil, errors.New("kube driver: no Kubernetes client")
	}
	clusterID, err := ClusterID(cfg, jobName)
	if err != nil {
		return nil, err
	}
	ns := conf.KubernetesNamespace.Get(cfg)
	host, portStr, err := net.SplitHostPort(rpc.String())
	if err != nil {
		return nil, fmt.Errorf("the AM's RPC address %s: %w", rpc, err)
	}
	if ip := os.Getenv(EnvAMPodIP); ip != "" && (host == "0.0.0.0" || host == "::") {
		host = ip
	}
	port, _ := strconv.Atoi(portStr)
	slots := conf.TaskManagerNumberOfTaskSlots.Get(cfg)
	cpu := conf.KubernetesTaskManagerCPU.Get(cfg)
	if cpu <= 0 {
		if cpu != -1 {
			return nil, fmt.Errorf("%s = %v: want a positive number of cores or -1", conf.KubernetesTaskManagerCPU.Key(), cpu)
		}
		cpu = float64(slots)
	}
	spec := PodSpec{
		ClusterID: clusterID, Image: conf.KubernetesContainerImage.Get(cfg),
		PullPolicy:     corev1.PullPolicy(conf.KubernetesContainerImagePullPolicy.Get(cfg)),
		ServiceAccount: conf.KubernetesServiceAccount.Get(cfg),
		NodeNameLabel:  conf.KubernetesNodeNameLabel.Get(cfg),
		Command:        []string{conf.KubernetesTideBinary.Get(cfg)},
		ConfDir:        conf.KubernetesConfDir.Get(cfg),
		CPU:            cpu, MemoryMB: conf.TaskManagerMemoryProcessSize.Get(cfg).Bytes() >> 20,
		AMHost: host, AMPort: port, JobID: jobID, AMRun: amRun,
		Env: map[string]string{"TIDE_LOG_LEVEL": os.Getenv("TIDE_LOG_LEVEL")},
	}
	owner, err := driverOwner(ctx, client, ns, log)
	if err != nil {
		return nil, err
	}
	spec.Owner = owner
	spec.InCluster = os.Getenv(EnvAMDeployment) != ""
	for k, v := range cfg.Map() {
		if name, ok := strings.CutPrefix(k, conf.ContainerizedTaskManagerEnvPrefix); ok && name != "" {
			spec.Env[name] = v
		}
	}
	return NewDriver(DriverConfig{Client: client, Namespace: ns, Pod: spec, Logger: log})
}
