package kube

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
)

// Client is a clientset and where its configuration came from, for messages.
type Client struct {
	kubernetes.Interface
	// Kubeconfig is the file(s) the configuration came from ("in-cluster" in a pod).
	Kubeconfig string
	// Server is the API server's URL.
	Server string
}

// NewClient connects through kubeconfig (kubernetes.config.file), else $KUBECONFIG or
// ~/.kube/config, else the pod's service account.
func NewClient(kubeconfig string) (*Client, error) {
	rules := clientcmd.NewDefaultClientConfigLoadingRules()
	source := ""
	if kubeconfig != "" {
		rules.ExplicitPath = kubeconfig
		source = kubeconfig
	} else if env := os.Getenv(clientcmd.RecommendedConfigPathEnvVar); env != "" {
		source = env
	} else {
		source = clientcmd.RecommendedHomeFile
	}
	var rc *rest.Config
	var err error
	if kubeconfig == "" && os.Getenv(clientcmd.RecommendedConfigPathEnvVar) == "" && !exists(clientcmd.RecommendedHomeFile) {
		if rc, err = rest.InClusterConfig(); err == nil {
			source = "in-cluster"
		}
	}
	if rc == nil {
		rc, err = clientcmd.NewNonInteractiveDeferredLoadingClientConfig(rules, &clientcmd.ConfigOverrides{}).ClientConfig()
		if err != nil {
			return nil, fmt.Errorf("the Kubernetes client configuration (kubeconfig %s; set kubernetes.config.file or $KUBECONFIG): %w", source, err)
		}
	}
	rc.Timeout = 30 * time.Second
	cs, err := kubernetes.NewForConfig(rc)
	if err != nil {
		return nil, fmt.Errorf("a Kubernetes client for %s (kubeconfig %s): %w", rc.Host, source, err)
	}
	return &Client{Interface: cs, Kubeconfig: source, Server: rc.Host}, nil
}

func exists(path string) bool {
	_, err := os.Stat(filepath.Clean(path))
	return err == nil
}

// CheckReachable asks the API server for its version; an error names the server and the
// kubeconfig it came from.
func (c *Client) CheckReachable(ctx context.Context) error {
	ctx, cancel := context.WithTimeout(ctx, 15*time.Second)
	defer cancel()
	if err := c.Discovery().RESTClient().Get().AbsPath("/version").Do(ctx).Error(); err != nil {
		if ctx.Err() != nil {
			return fmt.Errorf("the Kubernetes API server %s (kubeconfig %s) did not answer within 15 s: %w", c.Server, c.Kubeconfig, err)
		}
		return fmt.Errorf("the Kubernetes API server %s (kubeconfig %s) is not reachable: %w", c.Server, c.Kubeconfig, err)
	}
	return nil
}

// CheckNamespace refuses a namespace that does not exist; one the user may not read is
// taken as it is (the first create then says what is wrong).
func CheckNamespace(ctx context.Context, cs kubernetes.Interface, ns string) error {
	_, err := cs.CoreV1().Namespaces().Get(ctx, ns, metav1.GetOptions{})
	switch {
	case err == nil, apierrors.IsForbidden(err):
		return nil
	case apierrors.IsNotFound(err):
		return fmt.Errorf("namespace %s does not exist (kubernetes.namespace): create it (kubectl create namespace %s) or name another", ns, ns)
	}
	return describe(err, "get", "Namespace", ns, ns)
}
