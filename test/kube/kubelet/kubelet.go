package kubelet

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes"
	listersv1 "k8s.io/client-go/listers/core/v1"
	"k8s.io/client-go/tools/cache"
)

// Config is what a Kubelet needs.
type Config struct {
	Client kubernetes.Interface
	// Nodes are the node names to register and run pods for.
	Nodes []string
	// Dir holds the pod dirs (see the package doc).
	Dir string
	// Capacity of every node, as quantities ("16", "64Gi", "110").
	CPU, Memory, Pods string
	// APIServerHost and APIServerPort become KUBERNETES_SERVICE_HOST/PORT in every container.
	APIServerHost, APIServerPort string
	// APIServerURL goes into each pod's service-account kubeconfig (service_account.go);
	// empty: pods get none.
	APIServerURL string
	// BaseEnv is the environment every container starts from (before the pod's own env);
	// a container on a real node gets its image's, here typically PATH and HOME.
	BaseEnv []string
	// RestartBackoff is the first wait before a container is started again (doubling up to
	// MaxRestartBackoff); default 1 s and 10 s.
	RestartBackoff, MaxRestartBackoff time.Duration
	Logger                            *slog.Logger
}

// Kubelet registers its nodes and runs the pods bound to them.
type Kubelet struct {
	cfg        Config
	log        *slog.Logger
	nodes      map[string]bool
	pods       listersv1.PodLister
	configMaps listersv1.ConfigMapLister
	secrets    listersv1.SecretLister

	ctx     context.Context
	mu      sync.Mutex
	workers map[types.UID]*podWorker
	// done holds pods whose worker finished: events that arrive for them later start nothing.
	done map[types.UID]bool
	wg   sync.WaitGroup
}

// New checks cfg.
func New(cfg Config) (*Kubelet, error) {
	if cfg.Client == nil {
		return nil, errors.New("kubelet: no client")
	}
	if len(cfg.Nodes) == 0 {
		return nil, errors.New("kubelet: no nodes")
	}
	if cfg.Dir == "" {
		return nil, errors.New("kubelet: no directory")
	}
	abs, err := filepath.Abs(cfg.Dir)
	if err != nil {
		return nil, err
	}
	cfg.Dir = abs
	if cfg.CPU == "" {
		cfg.CPU = "16"
	}
	if cfg.Memory == "" {
		cfg.Memory = "64Gi"
	}
	if cfg.Pods == "" {
		cfg.Pods = "110"
	}
	if cfg.RestartBackoff <= 0 {
		cfg.RestartBackoff = time.Second
	}
	if cfg.MaxRestartBackoff < cfg.RestartBackoff {
		cfg.MaxRestartBackoff = max(10*time.Second, cfg.RestartBackoff)
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.Default()
	}
	k := &Kubelet{cfg: cfg, log: cfg.Logger, nodes: map[string]bool{}, workers: map[types.UID]*podWorker{}, done: map[types.UID]bool{}}
	for _, n := range cfg.Nodes {
		if n == "" || k.nodes[n] {
			return nil, fmt.Errorf("kubelet: node name %q empty or given twice", n)
		}
		k.nodes[n] = true
	}
	return k, nil
}

// PodDir is the host directory of pod namespace/name under the kubelet dir dir.
func PodDir(dir, namespace, name string) string {
	return filepath.Join(dir, "pods", namespace, name)
}

// Run registers the nodes, runs pods until ctx ends, then stops every container process
// (SIGTERM, SIGKILL after 5 s) and returns. ready is called once the nodes are registered
// and the pods of the cluster listed.
func (k *Kubelet) Run(ctx context.Context, ready func()) error {
	if err := os.MkdirAll(filepath.Join(k.cfg.Dir, "pods"), 0o755); err != nil {
		return err
	}
	if err := k.registerNodes(ctx); err != nil {
		return err
	}
	k.ctx = ctx
	all := informers.NewSharedInformerFactoryWithOptions(k.cfg.Client, 0)
	bound := informers.NewSharedInformerFactoryWithOptions(k.cfg.Client, 0,
		informers.WithTweakListOptions(func(o *metav1.ListOptions) { o.FieldSelector = "spec.nodeName!=" }))
	podInf := bound.Core().V1().Pods()
	cmInf := all.Core().V1().ConfigMaps()
	secInf := all.Core().V1().Secrets()
	k.pods, k.configMaps, k.secrets = podInf.Lister(), cmInf.Lister(), secInf.Lister()
	regs := make([]cache.ResourceEventHandlerRegistration, 0, 3)
	for _, h := range []struct {
		inf cache.SharedIndexInformer
		fn  cache.ResourceEventHandler
	}{
		{podInf.Informer(), cache.ResourceEventHandlerFuncs{
			AddFunc:    func(o any) { k.onPod(o, false) },
			UpdateFunc: func(_, o any) { k.onPod(o, false) },
			DeleteFunc: func(o any) { k.onPod(o, true) },
		}},
		{cmInf.Informer(), cache.ResourceEventHandlerFuncs{
			UpdateFunc: func(_, o any) { k.onObject(o, false) },
			AddFunc:    func(o any) { k.onObject(o, false) },
			DeleteFunc: func(o any) { k.onObject(o, false) },
		}},
		{secInf.Informer(), cache.ResourceEventHandlerFuncs{
			UpdateFunc: func(_, o any) { k.onObject(o, true) },
			AddFunc:    func(o any) { k.onObject(o, true) },
			DeleteFunc: func(o any) { k.onObject(o, true) },
		}},
	} {
		reg, err := h.inf.AddEventHandler(h.fn)
		if err != nil {
			return err
		}
		regs = append(regs, reg)
	}
	stop := make(chan struct{})
	all.Start(stop)
	bound.Start(stop)
	synced := make([]cache.InformerSynced, 0, len(regs))
	for _, r := range regs {
		synced = append(synced, r.HasSynced)
	}
	if !cache.WaitForCacheSync(ctx.Done(), synced...) {
		close(stop)
		all.Shutdown()
		bound.Shutdown()
		return fmt.Errorf("kubelet: pods, configmaps and secrets never listed: %w", context.Cause(ctx))
	}
	k.log.Info("kubelet ready", "nodes", k.cfg.Nodes, "dir", k.cfg.Dir)
	if ready != nil {
		ready()
	}
	hb := time.NewTicker(20 * time.Second)
	defer hb.Stop()
	for done := false; !done; {
		select {
		case <-ctx.Done():
			done = true
		case <-hb.C:
			k.heartbeat(ctx)
		}
	}
	k.log.Info("kubelet stopping: stopping every container")
	k.wg.Wait() // workers stop their processes when ctx ends
	close(stop)
	all.Shutdown()
	bound.Shutdown()
	return nil
}

// onPod hands a pod event to the pod's worker, starting one for a new pod on our nodes.
func (k *Kubelet) onPod(obj any, gone bool) {
	if t, ok := obj.(cache.DeletedFinalStateUnknown); ok {
		obj = t.Obj
	}
	p, ok := obj.(*corev1.Pod)
	if !ok || !k.nodes[p.Spec.NodeName] {
		return
	}
	k.mu.Lock()
	defer k.mu.Unlock()
	w := k.workers[p.UID]
	if w == nil {
		if gone || k.done[p.UID] || k.ctx.Err() != nil {
			return
		}
		w = newPodWorker(k, p)
		k.workers[p.UID] = w
		k.wg.Add(1)
		go w.run()
	}
	w.poke()
}

// onObject pokes the workers of the pods that read a changed ConfigMap or Secret.
func (k *Kubelet) onObject(obj any, secret bool) {
	if t, ok := obj.(cache.DeletedFinalStateUnknown); ok {
		obj = t.Obj
	}
	m, ok := obj.(metav1.Object)
	if !ok {
		return
	}
	k.mu.Lock()
	defer k.mu.Unlock()
	for _, w := range k.workers {
		if w.ns == m.GetNamespace() && w.uses(m.GetName(), secret) {
			w.poke()
		}
	}
}

// finished forgets a worker whose pod is gone.
func (k *Kubelet) finished(w *podWorker) {
	k.mu.Lock()
	delete(k.workers, w.uid)
	k.done[w.uid] = true
	k.mu.Unlock()
}
