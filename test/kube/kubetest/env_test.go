package kubetest

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestParse(t *testing.T) {
	good := "# written by up.sh\nKUBECONFIG=/k/kubeconfig\nTIDE_KUBE_NODES=kube-node-1,kube-node-2\n\nTIDE_KUBE_KUBELET_DIR=/k/kubelet\nTIDE_KUBE_TOKEN=abc=def\n"
	e, err := Parse(strings.NewReader(good))
	if err != nil {
		t.Fatal(err)
	}
	if e.Kubeconfig != "/k/kubeconfig" || len(e.Nodes) != 2 || e.Nodes[1] != "kube-node-2" || e.KubeletDir != "/k/kubelet" || e.Token != "abc=def" {
		t.Fatalf("parsed %+v", e)
	}
	if got := e.PodDir("ns", "p"); got != filepath.Join("/k/kubelet", "pods", "ns", "p") {
		t.Fatalf("PodDir = %s", got)
	}
	for name, in := range map[string]string{
		"not key=value": "KUBECONFIG\n",
		"duplicate":     "KUBECONFIG=a\nKUBECONFIG=b\n",
		"missing keys":  "KUBECONFIG=a\n",
		"space in key":  "A B=c\n",
	} {
		if _, err := Parse(strings.NewReader(in)); err == nil {
			t.Errorf("%s: %q parsed", name, in)
		}
	}
}

func TestLoadSkipsOrFailsWithoutEnv(t *testing.T) {
	t.Setenv(EnvFileVar, filepath.Join(t.TempDir(), "none"))
	t.Setenv(RequireEnvVar, "0")
	ran := false
	t.Run("skips", func(t *testing.T) {
		Load(t)
		ran = true
	})
	if ran {
		t.Fatal("Load returned without an env file")
	}
}

func TestContainerPIDErrors(t *testing.T) {
	dir := t.TempDir()
	e := &Env{KubeletDir: dir}
	if _, err := e.ContainerPID("ns", "p", ""); err == nil || !strings.Contains(err.Error(), "ns/p") {
		t.Fatalf("no pid file: %v", err)
	}
	if err := os.MkdirAll(e.PodDir("ns", "p"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(e.PodDir("ns", "p"), "pid"), []byte("1\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := e.ContainerPID("ns", "p", ""); err == nil {
		t.Fatal("pid 1 accepted")
	}
}
