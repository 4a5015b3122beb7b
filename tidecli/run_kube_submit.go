package tidecli

import (
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"os"
	"os/signal"
	"strings"
	"syscall"
	"time"

	"github.com/urfave/cli/v2"
	"gopkg.in/yaml.v3"
	corev1 "k8s.io/api/core/v1"

	"github.com/tidestream/tide/am"
	"github.com/tidestream/tide/conf"
	"github.com/tidestream/tide/internal/clusterauth"
	"github.com/tidestream/tide/kube"
)

// kubeTarget is tide run's target for Kubernetes (Flink's run-application target name).
const kubeTarget = "kubernetes-application"

// runKubernetesApplication creates a tide cluster for the job on Kubernetes (the AM's
// Deployment, its ConfigMap, Service, Secret and RBAC) and follows it like the YARN target:
// a line per change, the new AM's address when the AM restarts, how the job ended last.
func runKubernetesApplication(c *cli.Context) error {
	t0 := time.Now()
	cfg, name, args, job, err := loadJob(c)
	if err != nil {
		return err
	}
	for _, o := range job.Outputs() {
		if err := o.CheckForCluster("Kubernetes"); err != nil {
			return fmt.Errorf("job %s: %w", name, err)
		}
	}
	if conf.IsReactive(cfg) {
		if _, err := am.ActiveWorkerOptions(cfg); err != nil {
			return err
		}
	}
	from, err := kubeSavepoint(c)
	if err != nil {
		return err
	}
	ctx, stop := signal.NotifyContext(c.Context, syscall.SIGINT, syscall.SIGTERM)
	defer stop()
	out := c.App.Writer

	clusterID, generated := conf.KubernetesClusterID.Get(cfg), false
	if clusterID == "" {
		if clusterID, err = newClusterID(name); err != nil {
			return err
		}
		generated = true
	}
	if err := kube.CheckSubmissionClusterID(clusterID); err != nil {
		return err
	}
	kc, err := kube.NewClient(conf.KubernetesConfigFile.Get(cfg))
	if err != nil {
		return err
	}
	if err := kc.CheckReachable(ctx); err != nil {
		return err
	}
	ns := conf.KubernetesNamespace.Get(cfg)
	if err := kube.CheckNamespace(ctx, kc, ns); err != nil {
		return err
	}
	// The AM and TaskManagers always authenticate: with the configured secret, else one made
	// for this cluster. It goes into the cluster's Secret only, as does the REST token.
	secret, _, err := clusterauth.Load(conf.InternalSecret.Get(cfg), conf.InternalSecretFile.Get(cfg))
	if err != nil {
		return err
	}
	if !secret.Set() {
		if secret, err = clusterauth.Generate(); err != nil {
			return err
		}
	}
	token, err := restTokenFor(cfg)
	if err != nil {
		return err
	}
	flinkConf, err := kubeShippedConfig(cfg, clusterID, ns)
	if err != nil {
		return err
	}
	sa, createRBAC := conf.KubernetesServiceAccount.Get(cfg), false
	if !cfg.IsSet(conf.KubernetesServiceAccount.Key()) {
		sa, createRBAC = clusterID, true
	}
	env := map[string]string{"TIDE_LOG_LEVEL": c.String("log-level")}
	for k, v := range cfg.Map() {
		if n, ok := strings.CutPrefix(k, conf.ContainerizedMasterEnvPrefix); ok && n != "" {
			env[n] = v
		}
	}
	spec := kube.ClusterSpec{
		ClusterID: clusterID, Namespace: ns,
		Image:      conf.KubernetesContainerImage.Get(cfg),
		PullPolicy: corev1.PullPolicy(conf.KubernetesContainerImagePullPolicy.Get(cfg)),
		Command:    conf.KubernetesTideBinary.Get(cfg), ConfDir: conf.KubernetesConfDir.Get(cfg),
		ServiceAccount: sa, CreateRBAC: createRBAC,
		CPU: conf.KubernetesJobManagerCPU.Get(cfg), MemoryMB: mebibytes(conf.JobManagerMemoryProcessSize.Get(cfg)),
		RESTPort: conf.RestPort.Get(cfg), RPCPort: conf.JobManagerRPCPort.Get(cfg),
		ExposedType: corev1.ServiceType(conf.KubernetesRestServiceExposedType.Get(cfg)),
		JobName:     name, JobArgs: args, FlinkConf: flinkConf,
		FromSavepoint: from, AllowNonRestoredState: c.Bool(allowNonRestoredStateFlag),
		InternalSecret: secret, RESTToken: token, Env: env,
	}
	if dir, ok := conf.CheckpointsDir.Lookup(cfg); !ok || dir == "" {
		fmt.Fprintf(c.App.ErrWriter, "Warning: no state.checkpoints.dir: an AM that restarts starts the job from its beginning; set it to a directory every pod sees (hdfs://…, or a shared volume)\n")
	}
	dep, err := kube.Deploy(ctx, kc, spec)
	if err != nil {
		return err
	}
	how := "set"
	if generated {
		how = "generated"
	}
	fmt.Fprintf(out, "Submitted cluster %s to namespace %s in %s (kubernetes.cluster-id=%s, %s): %s\n",
		clusterID, ns, time.Since(t0).Round(time.Millisecond), clusterID, how, strings.Join(dep.Objects, ", "))
	f := &kubeFollower{cs: kc, ns: ns, clusterID: clusterID, out: out, errOut: c.App.ErrWriter, t0: t0, token: token}
	return f.follow(ctx, c, stop)
}

// kubeSavepoint is --fromSavepoint as the AM's pod gets it: an absolute path or a file:// or
// hdfs:// URI, which the AM reads in its pod (so it must be where every pod reads it, as the
// checkpoints are). Without it, --allowNonRestoredState has nothing to apply to.
func kubeSavepoint(c *cli.Context) (string, error) {
	from := strings.TrimSpace(c.String(fromSavepointFlag))
	if from == "" {
		if c.Bool(allowNonRestoredStateFlag) {
			return "", fmt.Errorf("--%s: expected with --%s only", allowNonRestoredStateFlag, fromSavepointFlag)
		}
		return "", nil
	}
	if strings.HasPrefix(from, "/") || strings.HasPrefix(from, "file://") || strings.HasPrefix(from, "hdfs://") {
		return from, nil
	}
	return "", fmt.Errorf("--%s %q: expected an absolute path or a file:// or hdfs:// URI that the AM's pod reads (the AM restores from it there, not this machine)",
		fromSavepointFlag, from)
}

// newClusterID is tide-<job>-<5 random letters and digits>, within the length limit.
func newClusterID(job string) (string, error) {
	b := make([]byte, 5)
	if _, err := rand.Read(b); err != nil {
		return "", fmt.Errorf("making a cluster id: %w", err)
	}
	const alphabet = "abcdefghijklmnopqrstuvwxyz0123456789"
	suffix := make([]byte, len(b))
	for i, v := range b {
		suffix[i] = alphabet[int(v)%len(alphabet)]
	}
	base := "tide-" + strings.Trim(sanitizeLabel(job), "-")
	if max := kube.MaxClusterIDLength - len(suffix) - 1; len(base) > max {
		base = strings.TrimRight(base[:max], "-")
	}
	return base + "-" + string(suffix), nil
}

func sanitizeLabel(s string) string {
	var b strings.Builder
	for _, r := range strings.ToLower(s) {
		if (r >= 'a' && r <= 'z') || (r >= '0' && r <= '9') {
			b.WriteRune(r)
		} else {
			b.WriteByte('-')
		}
	}
	return b.String()
}

// restTokenFor is rest.auth.token (or the first line of rest.auth.token-file) when set,
// else a new random token: the AM's REST API listens off loopback in a pod.
func restTokenFor(cfg *conf.Config) (string, error) {
	if t := strings.TrimSpace(conf.RestAuthToken.Get(cfg)); t != "" {
		return t, nil
	}
	if f := conf.RestAuthTokenFile.Get(cfg); f != "" {
		b, err := os.ReadFile(f)
		if err != nil {
			return "", fmt.Errorf("rest.auth.token-file %s: %w", f, err)
		}
		first, _, _ := strings.Cut(string(b), "\n")
		if t := strings.TrimSpace(first); t != "" {
			return t, nil
		}
		return "", fmt.Errorf("rest.auth.token-file %s: the first line is empty: expected the bearer token", f)
	}
	b := make([]byte, 24)
	if _, err := rand.Read(b); err != nil {
		return "", fmt.Errorf("making the REST token: %w", err)
	}
	return hex.EncodeToString(b), nil
}

// kubeShippedConfig is the flink-conf.yaml of the cluster's ConfigMap: every key set by the
// file or -D but the secrets and client-side keys, the cluster id and namespace, and the AM
// listening on every address of its pod (the Service, the TaskManagers and kubectl
// port-forward reach it there) unless the configuration says otherwise.
func kubeShippedConfig(cfg *conf.Config, clusterID, ns string) ([]byte, error) {
	m := map[string]string{}
	for _, k := range cfg.Keys() {
		if v, ok := cfg.Value(k); ok {
			m[k] = v
		}
	}
	for _, k := range []string{conf.InternalSecret.Key(), conf.InternalSecretFile.Key(), conf.RestAuthToken.Key(),
		conf.RestAuthTokenFile.Key(), conf.KubernetesConfigFile.Key()} {
		delete(m, k)
	}
	for k := range m {
		if strings.HasPrefix(k, conf.ContainerizedMasterEnvPrefix) {
			delete(m, k) // the AM's environment, not its configuration
		}
	}
	m[conf.KubernetesClusterID.Key()] = clusterID
	m[conf.KubernetesNamespace.Key()] = ns
	for k, v := range map[string]string{conf.JobManagerRPCAddress.Key(): "0.0.0.0", conf.RestBindAddress.Key(): "0.0.0.0"} {
		if !cfg.IsSet(k) {
			m[k] = v
		}
	}
	b, err := yaml.Marshal(m)
	if err != nil {
		return nil, fmt.Errorf("rendering the configuration for Kubernetes: %w", err)
	}
	return b, nil
}
