// Package kubetest gives Go tests the Kubernetes control plane started by `make k8s-up`
// (test/kube/up.sh): etcd, kube-apiserver, kube-scheduler, kube-controller-manager and the
// process kubelet (package test/kube/kubelet) with its fake nodes.
//
// Load skips the test when the harness is not running, unless TIDE_REQUIRE_KUBE=1, in which
// case it fails, so CI cannot skip silently. The env file is $TIDE_KUBE_ENV, default
// <repo>/.cache/kube/env. Each test takes a fresh namespace (Namespace); nothing waits for
// namespaces to go away.
package kubetest

import (
	"context"
	"fmt"
	"io"
	"strings"
	"testing"
	"time"

	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"

	"github.com/tidestream/tide/internal/testkit/envfile"
)

// RequireEnvVar makes a missing harness a test failure instead of a skip when set to 1.
const RequireEnvVar = "TIDE_REQUIRE_KUBE"

// EnvFileVar names the env file; default <repo>/.cache/kube/env.
const EnvFileVar = "TIDE_KUBE_ENV"

// Env is a running harness as its env file describes it.
type Env struct {
	Path       string            // the env file
	Vars       map[string]string // every KEY=value line
	Kubeconfig string            // KUBECONFIG: admin (system:masters) kubeconfig
	Nodes      []string          // TIDE_KUBE_NODES: the kubelet's nodes
	KubeletDir string            // TIDE_KUBE_KUBELET_DIR: pods/<ns>/<pod>/ dirs live here
	BinDir     string            // TIDE_KUBE_BIN_DIR: etcd, kube-apiserver, kube-scheduler, kube-controller-manager
	APIServer  string            // TIDE_KUBE_APISERVER: https://127.0.0.1:<port>
	Token      string            // TIDE_KUBE_TOKEN: the admin's bearer token
	LogDir     string            // TIDE_KUBE_LOG_DIR: each component's log
}

// envFile is the harness's env file, read through the shared envfile reader.
var envFile = envfile.File{Service: "Kubernetes harness", PathVar: EnvFileVar,
	Default: ".cache/kube/env", RequireVar: RequireEnvVar, Start: "make k8s-up"}

// Load returns the running harness, or skips t (fails it with TIDE_REQUIRE_KUBE=1). It
// checks that the API server answers, so a stale env file is caught here.
func Load(t testing.TB) *Env {
	t.Helper()
	e, err := LoadEnv()
	if err != nil {
		envFile.Missing(t, err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	if err := e.Ping(ctx); err != nil {
		envFile.Missing(t, fmt.Errorf("env file %s is stale: %w", e.Path, err))
	}
	return e
}

// LoadEnv reads the env file without a test: $TIDE_KUBE_ENV, default <repo>/.cache/kube/env.
func LoadEnv() (*Env, error) {
	vars, path, err := envFile.Load()
	if err != nil {
		return nil, err
	}
	e, err := fromVars(vars)
	if err != nil {
		return nil, fmt.Errorf("env file %s: %w", path, err)
	}
	e.Path = path
	return e, nil
}

// Parse reads an env file's KEY=value lines; KUBECONFIG, TIDE_KUBE_NODES and
// TIDE_KUBE_KUBELET_DIR are required.
func Parse(r io.Reader) (*Env, error) {
	vars, err := envfile.Parse(r)
	if err != nil {
		return nil, err
	}
	return fromVars(vars)
}

func fromVars(vars map[string]string) (*Env, error) {
	if err := envfile.RequireKeys(vars, "KUBECONFIG", "TIDE_KUBE_NODES", "TIDE_KUBE_KUBELET_DIR"); err != nil {
		return nil, err
	}
	e := &Env{Vars: vars,
		Kubeconfig: vars["KUBECONFIG"], KubeletDir: vars["TIDE_KUBE_KUBELET_DIR"], BinDir: vars["TIDE_KUBE_BIN_DIR"],
		APIServer: vars["TIDE_KUBE_APISERVER"], Token: vars["TIDE_KUBE_TOKEN"], LogDir: vars["TIDE_KUBE_LOG_DIR"],
		Nodes: strings.Split(vars["TIDE_KUBE_NODES"], ","),
	}
	return e, nil
}

// RESTConfig is the admin's client configuration.
func (e *Env) RESTConfig() (*rest.Config, error) {
	c, err := clientcmd.BuildConfigFromFlags("", e.Kubeconfig)
	if err != nil {
		return nil, fmt.Errorf("kubeconfig %s: %w", e.Kubeconfig, err)
	}
	c.QPS, c.Burst = 100, 200
	return c, nil
}

// Clientset is an admin clientset.
func (e *Env) Clientset() (kubernetes.Interface, error) {
	c, err := e.RESTConfig()
	if err != nil {
		return nil, err
	}
	return kubernetes.NewForConfig(c)
}

// Ping asks the API server whether it is ready.
func (e *Env) Ping(ctx context.Context) error {
	cs, err := e.Clientset()
	if err != nil {
		return err
	}
	body, err := cs.Discovery().RESTClient().Get().AbsPath("/readyz").DoRaw(ctx)
	if err != nil {
		return fmt.Errorf("API server /readyz: %w", err)
	}
	if strings.TrimSpace(string(body)) != "ok" {
		return fmt.Errorf("API server /readyz: %q", body)
	}
	return nil
}
