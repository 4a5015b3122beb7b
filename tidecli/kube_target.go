package tidecli

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/urfave/cli/v2"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/client-go/kubernetes"

	"github.com/tidestream/tide/api"
	"github.com/tidestream/tide/conf"
	"github.com/tidestream/tide/kube"
)

// kubeTargetPrefix is the -m form naming a tide cluster on Kubernetes instead of an AM
// address: kubernetes:<cluster-id> or kubernetes:<namespace>/<cluster-id> (Flink's form,
// -Dkubernetes.cluster-id=<cluster-id>, works too).
const (
	kubeTargetPrefix = "kubernetes:"
	kubeListTarget   = "kubernetes"
)

// kubeCluster is the cluster a client command names.
type kubeCluster struct {
	ns, id string
	cfg    *conf.Config
}

// kubeClusterOf is the cluster a client command names: -m kubernetes:[<namespace>/]<id>, else
// -Dkubernetes.cluster-id=<id> (namespace from kubernetes.namespace); nil when it names none.
func kubeClusterOf(c *cli.Context, addr string) (*kubeCluster, error) {
	rest, viaM := strings.CutPrefix(addr, kubeTargetPrefix)
	id := ""
	if viaM {
		id = rest
	} else {
		for _, d := range dynamicArgs(c) {
			if k, v, ok := strings.Cut(d, "="); ok && strings.TrimSpace(k) == conf.KubernetesClusterID.Key() {
				id = strings.TrimSpace(v)
			}
		}
		if id == "" {
			return nil, nil
		}
	}
	cfg, err := loadConfig(c)
	if err != nil {
		return nil, err
	}
	ns := conf.KubernetesNamespace.Get(cfg)
	if n, i, ok := strings.Cut(id, "/"); ok {
		ns, id = n, i
	}
	if id == "" {
		return nil, usagef("-m %s: expected %s<cluster-id> or %s<namespace>/<cluster-id>", addr, kubeTargetPrefix, kubeTargetPrefix)
	}
	if err := kube.CheckClusterID(id); err != nil {
		return nil, usagef("-m %s%s: %v", kubeTargetPrefix, id, err)
	}
	return &kubeCluster{ns: ns, id: id, cfg: cfg}, nil
}

// client connects to the cluster's API server and checks it answers.
func (k *kubeCluster) client(ctx context.Context) (*kube.Client, error) {
	kc, err := kube.NewClient(conf.KubernetesConfigFile.Get(k.cfg))
	if err != nil {
		return nil, err
	}
	if err := kc.CheckReachable(ctx); err != nil {
		return nil, err
	}
	return kc, nil
}

// resolve is the REST address of the cluster's current AM and its token; a cluster that
// does not exist is an error naming it.
func (k *kubeCluster) resolve(ctx context.Context) (string, string, error) {
	kc, err := k.client(ctx)
	if err != nil {
		return "", "", err
	}
	return resolveKubeAM(ctx, kc, k.ns, k.id)
}

func resolveKubeAM(ctx context.Context, cs kubernetes.Interface, ns, id string) (string, string, error) {
	if _, err := cs.AppsV1().Deployments(ns).Get(ctx, kube.DeploymentName(id), metav1.GetOptions{}); err != nil {
		return "", "", fmt.Errorf("tide cluster %s in namespace %s: %w", id, ns, err)
	}
	addr, err := kube.RESTAddress(ctx, cs, ns, id)
	if err != nil {
		return "", "", err
	}
	token, err := kube.RESTToken(ctx, cs, ns, id)
	if err != nil {
		return "", "", err
	}
	return addr, token, nil
}

// cancelKubeCluster cancels the cluster's job (jobRef, or its only job when empty), waits
// up to wait for it to end, and removes every object of the cluster, TaskManager pods
// included. An AM that does not answer does not keep the cluster: it is removed anyway.
func cancelKubeCluster(ctx context.Context, cs kubernetes.Interface, ns, id, jobRef string, out io.Writer, wait time.Duration) (map[string]any, error) {
	res := map[string]any{"cluster": id, "namespace": ns}
	addr, token, err := resolveKubeAM(ctx, cs, ns, id)
	var cl *api.Client
	if err == nil {
		cl, err = api.NewClient(api.Config{Address: addr, Token: token, HTTPClient: &http.Client{Timeout: 5 * time.Second}})
	}
	var job api.JobOverview
	if err == nil {
		if jobRef == "" {
			job, err = onlyJobOf(ctx, cl, "tide cluster "+id)
		} else {
			job, err = resolveJob(ctx, cl, jobRef)
		}
	}
	if err == nil {
		err = cl.CancelJob(ctx, job.JID)
	}
	if err != nil {
		if exitCode(err) == exitError && jobRef != "" {
			return res, err // the AM answered and refused: nothing is removed
		}
		fmt.Fprintf(out, "The AM of cluster %s does not answer (%v): removing the cluster without cancelling its job\n", id, termSafe(err.Error()))
	} else {
		res["jid"] = job.JID
		fmt.Fprintf(out, "Cancellation of job %s (%s) requested.\n", job.JID, termSafe(job.Name))
		state := awaitKubeEnd(ctx, cs, cl, ns, id, job.JID, wait)
		res["state"] = state
		fmt.Fprintf(out, "Job %s is %s.\n", job.JID, state)
	}
	deleted, err := kube.DeleteCluster(ctx, cs, ns, id, "")
	if err != nil {
		return res, err
	}
	// Pods end after their grace period: wait until nothing of the cluster is left. The AM
	// removes the cluster too once its job ended, at the same time: an object it wrote after
	// the delete above (or any object but a terminating pod) is deleted again.
	var left []string
	for deadline, again := time.Now().Add(wait), time.Now().Add(2*time.Second); ; {
		left, err = kube.Leftovers(ctx, cs, ns, id)
		if err == nil && len(left) == 0 || time.Now().After(deadline) || ctx.Err() != nil {
			break
		}
		if err == nil && time.Now().After(again) && slices.ContainsFunc(left, func(o string) bool { return !strings.HasPrefix(o, "Pod/") }) {
			if _, err := kube.DeleteCluster(ctx, cs, ns, id, ""); err != nil {
				fmt.Fprintf(out, "Deleting what is left of cluster %s again: %v\n", id, err)
			}
			again = time.Now().Add(2 * time.Second)
		}
		time.Sleep(250 * time.Millisecond)
	}
	if err != nil {
		return res, err
	}
	if len(left) > 0 {
		return res, fmt.Errorf("cluster %s: still in namespace %s after %s: %s", id, ns, wait, strings.Join(left, ", "))
	}
	sort.Strings(deleted)
	res["deleted"] = deleted
	fmt.Fprintf(out, "Removed cluster %s from namespace %s.\n", id, ns)
	return res, nil
}

// awaitKubeEnd waits until the job is terminal, the AM published its end or went away.
func awaitKubeEnd(ctx context.Context, cs kubernetes.Interface, cl *api.Client, ns, id, jid string, wait time.Duration) string {
	ctx, cancel := context.WithTimeout(ctx, wait)
	defer cancel()
	last := "CANCELLING"
	for {
		if st, err := kube.ReadStatus(ctx, cs, ns, id); err == nil {
			if s := st[kube.StatusJobState]; s != "" {
				return s
			}
			if st == nil {
				return "CANCELED" // the AM removed the cluster once the job ended
			}
		}
		state, err := cl.JobState(ctx, jid)
		switch {
		case err == nil:
			last = state
			if api.IsTerminal(state) {
				return state
			}
		case exitCode(err) == exitUnreachable:
			return "CANCELED"
		}
		select {
		case <-ctx.Done():
			return last
		case <-time.After(200 * time.Millisecond):
		}
	}
}

// onlyJobOf is the one job of a per-job cluster's AM.
func onlyJobOf(ctx context.Context, c *api.Client, what string) (api.JobOverview, error) {
	jobs, err := c.Jobs(ctx)
	if err != nil {
		return api.JobOverview{}, err
	}
	if len(jobs) != 1 {
		return api.JobOverview{}, fmt.Errorf("%s: its AM runs %d jobs, name one", what, len(jobs))
	}
	return jobs[0], nil
}

// listKubeClusters is tide list --target kubernetes: the tide clusters of the namespace,
// with their AM pod, their job's state and the REST address.
func listKubeClusters(c *cli.Context) error {
	cfg, err := loadConfig(c)
	if err != nil {
		return err
	}
	k := &kubeCluster{ns: conf.KubernetesNamespace.Get(cfg), cfg: cfg}
	kc, err := k.client(c.Context)
	if err != nil {
		return err
	}
	sel := labels.Set{kube.LabelType: kube.TypeValue}.String() // only a cluster's AM is a Deployment
	deps, err := kc.AppsV1().Deployments(k.ns).List(c.Context, metav1.ListOptions{LabelSelector: sel})
	if err != nil {
		return fmt.Errorf("listing the tide clusters of namespace %s (kubeconfig %s): %w", k.ns, kc.Kubeconfig, err)
	}
	type row struct {
		ClusterID string `json:"clusterId"`
		Namespace string `json:"namespace"`
		Job       string `json:"job"`
		AMPod     string `json:"amPod"`
		AMState   string `json:"amState"`
		JobState  string `json:"jobState"`
		REST      string `json:"rest"`
	}
	rows := make([]row, 0, len(deps.Items))
	httpc := &http.Client{Timeout: 3 * time.Second}
	for _, d := range deps.Items {
		id := d.Labels[kube.LabelApp]
		r := row{ClusterID: id, Namespace: k.ns, Job: d.Annotations[kube.AnnotationJobName], AMState: "no pod", JobState: "unknown"}
		if pod, err := kube.CurrentAMPod(c.Context, kc, k.ns, id); err == nil && pod != nil {
			r.AMPod, r.AMState = pod.Name, string(pod.Status.Phase)
			if n := restarts(pod); n > 0 {
				r.AMState += fmt.Sprintf(" (%d restarts)", n)
			}
		}
		if addr, token, err := resolveKubeAM(c.Context, kc, k.ns, id); err == nil {
			r.REST = addr
			if cl, err := api.NewClient(api.Config{Address: addr, Token: token, HTTPClient: httpc}); err == nil {
				if jobs, err := cl.Jobs(c.Context); err == nil && len(jobs) > 0 {
					r.JobState = jobs[0].State
				}
			}
		}
		rows = append(rows, r)
	}
	sort.Slice(rows, func(i, j int) bool { return rows[i].ClusterID < rows[j].ClusterID })
	cc := &clientCommand{out: c.App.Writer, json: c.Bool("json")}
	if cc.json {
		return cc.printJSON(map[string]any{"clusters": rows})
	}
	if len(rows) == 0 {
		cc.progress("No tide clusters in namespace %s.", k.ns)
		return nil
	}
	t := newTable(cc.out, "CLUSTER ID", "NAMESPACE", "JOB", "AM POD", "AM", "JOB STATE", "REST")
	for _, r := range rows {
		t.row(r.ClusterID, r.Namespace, r.Job, r.AMPod, r.AMState, r.JobState, r.REST)
	}
	return t.flush()
}
