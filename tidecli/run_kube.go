package tidecli

import (
	"context"
	"fmt"
	"log/slog"
	"net"
	"os"
	"strconv"
	"strings"
	"time"

	"k8s.io/client-go/kubernetes"

	"github.com/tidestream/tide/am"
	"github.com/tidestream/tide/conf"
	"github.com/tidestream/tide/core"
	"github.com/tidestream/tide/drivers"
	"github.com/tidestream/tide/kube"
)

// kubeAM is an AM that runs in a pod: its driver, and when it runs from a submitted
// cluster's Deployment, what it needs to publish its addresses and remove the cluster when
// the job ends.
type kubeAM struct {
	driver    *kube.Driver
	client    kubernetes.Interface
	ns        string
	clusterID string
	pod       string
	// cluster: the AM runs from the cluster's Deployment (tide run --target kubernetes-application).
	cluster bool
}

// kubeDriver builds the Kubernetes driver when this AM runs in a pod that tide's
// Kubernetes submission started (kube.EnvAMPod is set); otherwise nil. It also enables
// active worker requests in opts, and, in a submitted cluster, publishes the AM's REST and
// RPC addresses in the status ConfigMap (the client and the TaskManagers read them there).
func kubeDriver(ctx context.Context, cfg *conf.Config, opts *core.Options, jobID, jobName string, rpc, restAddr net.Addr) (*kubeAM, error) {
	if !kube.InPod() {
		return nil, nil
	}
	aw, err := am.ActiveWorkerOptions(cfg)
	if err != nil {
		return nil, err
	}
	opts.ActiveWorkers = aw
	rc, err := kube.RESTConfig()
	if err != nil {
		return nil, fmt.Errorf("the Kubernetes driver: %w", err)
	}
	client, err := kubernetes.NewForConfig(rc)
	if err != nil {
		return nil, fmt.Errorf("the Kubernetes driver: client for %s: %w", rc.Host, err)
	}
	run := strconv.FormatInt(time.Now().UnixMilli(), 36) // labels the pods of this AM run
	d, err := kube.NewDriverFromConf(ctx, cfg, client, jobID, jobName, run, rpc, slog.Default())
	if err != nil {
		return nil, fmt.Errorf("the Kubernetes driver: %w", err)
	}
	k := &kubeAM{driver: d, client: client, ns: conf.KubernetesNamespace.Get(cfg), pod: os.Getenv(kube.EnvAMPodName)}
	if k.clusterID, err = kube.ClusterID(cfg, jobName); err != nil {
		return nil, err
	}
	if os.Getenv(kube.EnvAMDeployment) == "" {
		return k, nil
	}
	k.cluster = true
	status := map[string]string{
		kube.StatusRESTAddress: reachable(restAddr), kube.StatusRPCAddress: reachable(rpc),
		kube.StatusAMPod: k.pod, kube.StatusJobID: jobID, kube.StatusJobState: "", kube.StatusDiagnostics: "",
	}
	pctx, cancel := context.WithTimeout(ctx, time.Minute)
	defer cancel()
	if err := kube.PublishStatus(pctx, client, k.ns, k.clusterID, d.Owner(), status); err != nil {
		return nil, fmt.Errorf("publishing the AM's addresses: %w", err)
	}
	slog.Info("AM addresses published", "configmap", k.ns+"/"+kube.StatusConfigMapName(k.clusterID),
		"rest", status[kube.StatusRESTAddress], "rpc", status[kube.StatusRPCAddress])
	return k, nil
}

// reachable is addr with a wildcard host replaced by the pod's IP.
func reachable(addr net.Addr) string {
	host, port, err := net.SplitHostPort(addr.String())
	if err != nil {
		return addr.String()
	}
	if ip := net.ParseIP(host); ip != nil && ip.IsUnspecified() {
		if podIP := os.Getenv(kube.EnvAMPodIP); podIP != "" {
			host = podIP
		}
	}
	return net.JoinHostPort(host, port)
}

// Driver is the AM's driver (nil for an AM outside a pod).
func (k *kubeAM) Driver() drivers.Driver {
	if k == nil {
		return nil
	}
	return k.driver
}

// handsOff: the AM of a submitted cluster leaves its subtasks running when it is stopped
// (its pod deleted, evicted or drained): the Deployment starts another AM pod, which adopts
// them (am.Config.HandOffOnStop).
func (k *kubeAM) handsOff() bool { return k != nil && k.cluster }

// finish runs after the job ended. In a submitted cluster a FINISHED, CANCELED or FAILED job
// ends the cluster, as Flink's application mode does: the AM publishes how the job ended
// (an attached tide run prints it) and removes every object of the cluster, its own pod
// last but for the RBAC objects, since with restartPolicy Always its container would
// otherwise start the job again. A SUSPENDED job (the AM was stopped) leaves everything for
// the next AM.
func (k *kubeAM) finish(res am.Result) {
	if k == nil || !k.cluster || res.Status == core.StatusSuspended {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	if there, err := kube.UpdateStatus(ctx, k.client, k.ns, k.clusterID, map[string]string{
		kube.StatusJobState: string(res.Status), kube.StatusDiagnostics: res.Cause,
	}); err != nil {
		slog.Warn("cannot publish how the job ended", "err", err)
	} else if !there {
		slog.Info("status ConfigMap already removed (tide cancel removes the cluster too): the job's end is not published", "cluster", k.clusterID)
	}
	slog.Info("job ended: removing the cluster's objects", "cluster", k.clusterID, "namespace", k.ns, "status", res.Status)
	deleted, err := kube.DeleteCluster(ctx, k.client, k.ns, k.clusterID, k.pod)
	if err != nil {
		slog.Error("the cluster's objects are not all removed; tide cancel -m kubernetes:"+k.clusterID+" retries", "err", err)
	}
	slog.Info("cluster removed", "objects", len(deleted))
}

// kubeAMAddressFile is the AM address file of a TaskManager pod of a submitted cluster
// ($TIDE_AM_ADDRESS_PATH, the status ConfigMap's rpc-address as mounted), as a file:// URI;
// "" elsewhere (tm/worker then reads $TIDE_AM_ADDRESS_FILE, as on YARN).
func kubeAMAddressFile() string {
	if p := os.Getenv(kube.EnvAMAddressPath); strings.HasPrefix(p, "/") {
		return "file://" + p
	}
	return ""
}
