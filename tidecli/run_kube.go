package tidecli

import (
	"context"
	"fmt"
	"log/slog"
	"net"
	"strconv"
	"time"

	"k8s.io/client-go/kubernetes"

	"github.com/tidestream/tide/am"
	"github.com/tidestream/tide/conf"
	"github.com/tidestream/tide/core"
	"github.com/tidestream/tide/drivers"
	"github.com/tidestream/tide/kube"
)

// kubeDriver builds the Kubernetes driver when this AM runs in a pod that tide's
// Kubernetes submission started (kube.EnvAMPod is set); otherwise nil. It also enables
// active worker requests in opts.
func kubeDriver(ctx context.Context, cfg *conf.Config, opts *core.Options, jobID, jobName string, rpc net.Addr) (drivers.Driver, error) {
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
	return d, nil
}
