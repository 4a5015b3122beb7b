package kube

import (
	"fmt"
	"regexp"
	"strconv"

	"k8s.io/apimachinery/pkg/labels"
)

// Label keys and values on TaskManager pods. type/app/component follow Flink's native
// Kubernetes selectors; the tide.io/ keys say which job, AM run and attempt made the pod.
const (
	LabelType      = "type"
	LabelApp       = "app"
	LabelComponent = "component"
	LabelJob       = "tide.io/job"
	LabelAMRun     = "tide.io/am-run"
	LabelAttempt   = "tide.io/attempt"

	TypeValue            = "tide-native-kubernetes"
	ComponentTaskManager = "taskmanager"
)

// MaxClusterIDLength keeps derived pod names and label values within Kubernetes' limits
// (Flink's MAXIMUM_CHARACTERS_OF_CLUSTER_ID).
const MaxClusterIDLength = 45

// clusterIDPattern is an RFC 1123 label, which pod names and label values both accept.
var clusterIDPattern = regexp.MustCompile(`^[a-z0-9]([-a-z0-9]*[a-z0-9])?$`)

// CheckClusterID refuses a cluster id that cannot name pods and label them.
func CheckClusterID(id string) error {
	if len(id) > MaxClusterIDLength || !clusterIDPattern.MatchString(id) {
		return fmt.Errorf("kubernetes.cluster-id %q: want at most %d lower-case letters, digits and '-', starting and ending with a letter or digit", id, MaxClusterIDLength)
	}
	return nil
}

// Selector selects every TaskManager pod of a cluster, whatever the AM run or attempt.
func Selector(clusterID string) labels.Set {
	return labels.Set{LabelType: TypeValue, LabelApp: clusterID, LabelComponent: ComponentTaskManager}
}

// podName is <clusterId>-taskmanager-<attempt>-<index>, Flink's TASK_MANAGER_POD_FORMAT.
func podName(clusterID string, attempt, index int) string {
	return fmt.Sprintf("%s-taskmanager-%d-%d", clusterID, attempt, index)
}

var podNamePattern = regexp.MustCompile(`^(\S+)-taskmanager-(\d+)-(\d+)$`)

// ParsePodName returns the attempt and index of a TaskManager pod name of clusterID.
func ParsePodName(clusterID, name string) (attempt, index int, err error) {
	m := podNamePattern.FindStringSubmatch(name)
	if m == nil || m[1] != clusterID {
		return 0, 0, fmt.Errorf("pod %q is not named %s-taskmanager-<attempt>-<index>", name, clusterID)
	}
	attempt, err1 := strconv.Atoi(m[2])
	index, err2 := strconv.Atoi(m[3])
	if err1 != nil || err2 != nil || attempt < 0 || index < 0 {
		return 0, 0, fmt.Errorf("pod %q: attempt or index out of range", name)
	}
	return attempt, index, nil
}
