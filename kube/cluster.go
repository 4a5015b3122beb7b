package kube

import (
	"fmt"
	"regexp"

	"k8s.io/apimachinery/pkg/labels"
)

// A tide cluster on Kubernetes (tide run --target kubernetes-application) is one AM
// Deployment and the objects it needs, all named after the cluster id and labelled
// type=tide-native-kubernetes, app=<cluster-id>. Every object but the Deployment carries an
// ownerReference to it, so deleting the Deployment removes the cluster where a garbage
// collector runs; DeleteCluster also deletes them one by one.

// ComponentJobManager labels the AM's Deployment, pods and the objects made for it.
const ComponentJobManager = "jobmanager"

// Environment of the AM container besides EnvAMPod and EnvAMPodName.
const (
	// EnvAMPodIP is the AM pod's IP (downward API status.podIP).
	EnvAMPodIP = "TIDE_KUBERNETES_AM_POD_IP"
	// EnvAMDeployment names the AM's Deployment: the owner of its TaskManager pods and the
	// cluster id whose objects the AM removes when the job ends.
	EnvAMDeployment = "TIDE_KUBERNETES_AM_DEPLOYMENT"
	// EnvInternalSecret is clusterauth's $TIDE_INTERNAL_SECRET, filled from the cluster's
	// Secret in the AM and TaskManager containers.
	EnvInternalSecret = "TIDE_INTERNAL_SECRET"
)

// Keys of the cluster's Secret.
const (
	SecretKeyInternal  = "internal-secret" // the AM-TaskManager RPC and data plane secret
	SecretKeyRESTToken = "rest-token"      // rest.auth.token of the AM
)

// Mount points in the pods besides kubernetes.flink.conf.dir.
const (
	// SecretDir holds the Secret's files in the AM container (mode 0400).
	SecretDir = "/opt/tide/secret"
	// StatusDir holds the status ConfigMap's files in TaskManager containers: rpc-address
	// is the AM address file they follow across AM restarts.
	StatusDir = "/opt/tide/status"
)

// Keys of the status ConfigMap the AM writes.
const (
	StatusRESTAddress = "rest-address" // host:port of the AM's REST API, as the pod serves it
	StatusRPCAddress  = "rpc-address"  // host:port of the AM's RPC server (the TaskManagers' AM address file)
	StatusAMPod       = "am-pod"       // the pod of the AM that wrote the addresses
	StatusJobID       = "job-id"
	StatusJobState    = "job-state" // set when the job ended: FINISHED, CANCELED or FAILED
	StatusDiagnostics = "diagnostics"
)

// Default ports of the AM in a pod (Flink's): every pod has its own IP.
const (
	DefaultRESTPort = 8081
	DefaultRPCPort  = 6123
)

// Names of a cluster's objects.
func DeploymentName(clusterID string) string      { return clusterID }
func ConfigMapName(clusterID string) string       { return configMapName(clusterID) }
func StatusConfigMapName(clusterID string) string { return clusterID + "-status" }
func ServiceName(clusterID string) string         { return clusterID + "-rest" }
func SecretName(clusterID string) string          { return clusterID + "-secret" }
func RoleName(clusterID string) string            { return clusterID + "-am" }

// ClusterLabels are on every object of a cluster.
func ClusterLabels(clusterID string) labels.Set {
	return labels.Set{LabelType: TypeValue, LabelApp: clusterID}
}

// AMLabels select the AM's pods (the Deployment's selector, the Service's).
func AMLabels(clusterID string) labels.Set {
	return labels.Set{LabelType: TypeValue, LabelApp: clusterID, LabelComponent: ComponentJobManager}
}

// ownedByCluster reports whether an object's labels say it belongs to clusterID.
func ownedByCluster(lbl map[string]string, clusterID string) bool {
	return lbl[LabelType] == TypeValue && lbl[LabelApp] == clusterID
}

// serviceNamePattern is an RFC 1035 label: Service names must start with a letter.
var serviceNamePattern = regexp.MustCompile(`^[a-z]([-a-z0-9]*[a-z0-9])?$`)

// CheckSubmissionClusterID refuses a cluster id that cannot name a whole cluster: besides
// CheckClusterID's rules, its Service needs a name starting with a letter.
func CheckSubmissionClusterID(id string) error {
	if err := CheckClusterID(id); err != nil {
		return err
	}
	if !serviceNamePattern.MatchString(id) {
		return fmt.Errorf("kubernetes.cluster-id %q: must start with a letter (it names the cluster's Service %s)", id, ServiceName(id))
	}
	return nil
}
