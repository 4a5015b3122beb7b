package tidecli

import (
	"strings"
	"testing"

	"gopkg.in/yaml.v3"
	corev1 "k8s.io/api/core/v1"

	"github.com/tidestream/tide/conf"
	"github.com/tidestream/tide/kube"
)

func TestNewClusterID(t *testing.T) {
	for _, job := range []string{"CheckableCount", "A_very/long job name that goes on and on and on and on", "--"} {
		id, err := newClusterID(job)
		if err != nil {
			t.Fatal(err)
		}
		if err := kube.CheckSubmissionClusterID(id); err != nil || !strings.HasPrefix(id, "tide-") {
			t.Errorf("job %q: id %q: %v", job, id, err)
		}
	}
	a, _ := newClusterID("x")
	b, _ := newClusterID("x")
	if a == b {
		t.Errorf("two generated ids are equal: %s", a)
	}
}

// TestKubeShippedConfig: the ConfigMap's flink-conf.yaml names the cluster, binds the AM to
// the pod's addresses unless told otherwise, and holds no secret, token or client-side key.
func TestKubeShippedConfig(t *testing.T) {
	cfg, _, err := conf.Load("", []string{
		"security.internal.secret=0123456789abcdef0123", "rest.auth.token=tok-123",
		"kubernetes.config.file=/home/me/kc", "containerized.master.env.KUBECONFIG=/home/me/kc",
		"containerized.taskmanager.env.FOO=bar", "rest.bind-address=127.0.0.1", "execution-mode=reactive",
	})
	if err != nil {
		t.Fatal(err)
	}
	b, err := kubeShippedConfig(cfg, "tide-x", "ns1")
	if err != nil {
		t.Fatal(err)
	}
	var m map[string]string
	if err := yaml.Unmarshal(b, &m); err != nil {
		t.Fatal(err)
	}
	for k, want := range map[string]string{
		"kubernetes.cluster-id": "tide-x", "kubernetes.namespace": "ns1", "jobmanager.rpc.address": "0.0.0.0",
		"rest.bind-address": "127.0.0.1", "execution-mode": "reactive", "containerized.taskmanager.env.FOO": "bar",
	} {
		if m[k] != want {
			t.Errorf("%s = %q, want %q", k, m[k], want)
		}
	}
	for _, bad := range []string{"0123456789abcdef0123", "tok-123", "/home/me/kc"} {
		if strings.Contains(string(b), bad) {
			t.Errorf("shipped configuration holds %q:\n%s", bad, b)
		}
	}
}

func TestAMPodProblem(t *testing.T) {
	for _, tc := range []struct {
		name  string
		pod   corev1.Pod
		want  string
		fatal bool
	}{
		{"running", corev1.Pod{Status: corev1.PodStatus{Phase: corev1.PodRunning, ContainerStatuses: []corev1.ContainerStatus{{Name: "jobmanager", State: corev1.ContainerState{Running: &corev1.ContainerStateRunning{}}}}}}, "", false},
		{"image", corev1.Pod{Status: corev1.PodStatus{Phase: corev1.PodPending, ContainerStatuses: []corev1.ContainerStatus{{Name: "jobmanager",
			State: corev1.ContainerState{Waiting: &corev1.ContainerStateWaiting{Reason: "ImagePullBackOff", Message: "Back-off pulling image \"nope:1\""}}}}}},
			`container jobmanager ImagePullBackOff: Back-off pulling image "nope:1"`, true},
		{"exit", corev1.Pod{Status: corev1.PodStatus{Phase: corev1.PodRunning, ContainerStatuses: []corev1.ContainerStatus{{Name: "jobmanager",
			State: corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{ExitCode: 127, Reason: "Error", Message: "exec: no such file"}}}}}},
			"exited with code 127 (Error: exec: no such file)", true},
		{"unschedulable", corev1.Pod{Status: corev1.PodStatus{Phase: corev1.PodPending, Conditions: []corev1.PodCondition{{Type: corev1.PodScheduled,
			Status: corev1.ConditionFalse, Reason: corev1.PodReasonUnschedulable, Message: "0/3 nodes are available"}}}}, "cannot be scheduled: 0/3 nodes are available", false},
	} {
		got, fatal := amPodProblem(&tc.pod)
		if !strings.Contains(got, tc.want) || (tc.want == "") != (got == "") || fatal != tc.fatal {
			t.Errorf("%s: %q fatal=%v, want %q fatal=%v", tc.name, got, fatal, tc.want, tc.fatal)
		}
	}
}

// TestKubeRunSavepointArgs: --fromSavepoint must name a place the AM's pod reads, and
// --allowNonRestoredState needs it; both are refused before any cluster is contacted.
func TestKubeRunSavepointArgs(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"--fromSavepoint", "savepoints/sp-1"}, `--fromSavepoint "savepoints/sp-1": expected an absolute path or a file:// or hdfs:// URI that the AM's pod reads`},
		{[]string{"--fromSavepoint", "s3://b/sp-1"}, `--fromSavepoint "s3://b/sp-1": expected an absolute path`},
		{[]string{"--allowNonRestoredState"}, "--allowNonRestoredState: expected with --fromSavepoint only"},
	} {
		args := append([]string{"run", "--target", "kubernetes-application", "--job-classname", "CheckableCount",
			"-Dkubernetes.config.file=/nonexistent/kubeconfig"}, tc.args...)
		out, code := runTide(t, append(args, "--", "--output", t.TempDir())...)
		if code != exitError || !strings.Contains(out, tc.want) {
			t.Errorf("%v: exit %d, want %d and %q; output:\n%s", tc.args, code, exitError, tc.want, out)
		}
	}
}
