package kubetest

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
)

// Client is an admin clientset; it fails t when the kubeconfig does not load.
func (e *Env) Client(t testing.TB) kubernetes.Interface {
	t.Helper()
	cs, err := e.Clientset()
	if err != nil {
		t.Fatal(err)
	}
	return cs
}

// Namespace creates a fresh namespace for t (named after the test) and deletes it when t
// ends, without waiting for it to go (the controller-manager empties it later).
func (e *Env) Namespace(t testing.TB) string {
	t.Helper()
	cs := e.Client(t)
	base := strings.ToLower(t.Name())
	var b strings.Builder
	for _, r := range base {
		if r >= 'a' && r <= 'z' || r >= '0' && r <= '9' {
			b.WriteRune(r)
		} else if b.Len() > 0 && !strings.HasSuffix(b.String(), "-") {
			b.WriteByte('-')
		}
	}
	name := strings.Trim(b.String(), "-")
	if len(name) > 40 {
		name = strings.Trim(name[:40], "-")
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	ns, err := cs.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{
		GenerateName: name + "-", Labels: map[string]string{"tide.io/test": "true"},
	}}, metav1.CreateOptions{})
	if err != nil {
		t.Fatalf("creating a namespace for %s: %v", t.Name(), err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		if err := cs.CoreV1().Namespaces().Delete(ctx, ns.Name, metav1.DeleteOptions{}); err != nil {
			t.Logf("deleting namespace %s: %v", ns.Name, err)
		}
	})
	return ns.Name
}

// PodDir is the kubelet's host directory of pod namespace/name: pid, <container>.pid,
// <container>.log, volumes/<volume>/.
func (e *Env) PodDir(namespace, name string) string {
	return filepath.Join(e.KubeletDir, "pods", namespace, name)
}

// PodLog is the log file of a container of pod namespace/name.
func (e *Env) PodLog(namespace, name, container string) string {
	return filepath.Join(e.PodDir(namespace, name), container+".log")
}

// ContainerPID is the process id (and process group) of a container of the pod; container
// "" is the pod's first container.
func (e *Env) ContainerPID(namespace, name, container string) (int, error) {
	f := filepath.Join(e.PodDir(namespace, name), "pid")
	if container != "" {
		f = filepath.Join(e.PodDir(namespace, name), container+".pid")
	}
	b, err := os.ReadFile(f)
	if err != nil {
		return 0, fmt.Errorf("pod %s/%s runs no process the kubelet knows: %w", namespace, name, err)
	}
	pid, err := strconv.Atoi(strings.TrimSpace(string(b)))
	if err != nil || pid <= 1 {
		return 0, fmt.Errorf("pod %s/%s: pid file %s holds %q", namespace, name, f, b)
	}
	return pid, nil
}

// KillContainer kills the pod's first container with SIGKILL, the way a crash (or the OOM
// killer) would: the kubelet reports it terminated with exit code 137.
func (e *Env) KillContainer(namespace, name string) error {
	return e.SignalContainer(namespace, name, "", syscall.SIGKILL)
}

// SignalContainer sends sig to the process group of a container of the pod.
func (e *Env) SignalContainer(namespace, name, container string, sig syscall.Signal) error {
	pid, err := e.ContainerPID(namespace, name, container)
	if err != nil {
		return err
	}
	if err := syscall.Kill(-pid, sig); err != nil {
		return fmt.Errorf("pod %s/%s: signalling process group %d: %w", namespace, name, pid, err)
	}
	return nil
}
