package e2e

import (
	"context"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/tidestream/tide/internal/testkit"
)

// TestKubeReadmeCommands runs the README's "Running on Kubernetes" block as written, with
// the harness's kubeconfig, a test namespace, local directories and the settings that run
// pods as local processes substituted: the cluster starts detached, tide list shows it
// RUNNING, tide status reaches its AM through the API server, and tide cancel removes every
// object of the cluster.
func TestKubeReadmeCommands(t *testing.T) {
	k := newKubeApp(t)
	block := readmeSection(t, "## Running on Kubernetes")
	for _, want := range []string{"$HOME/.kube/config", "build/tide run --target kubernetes-application", "kubernetes.namespace=default",
		"kubernetes:default/tide-count", "file:///shared/checkpoints", "/shared/out"} {
		if !strings.Contains(block, want) {
			t.Fatalf("the README's Kubernetes block changed shape (no %q):\n%s", want, block)
		}
	}
	var extra []string
	for _, d := range k.podSettings() {
		if !strings.HasPrefix(d, "-Dkubernetes.namespace=") {
			extra = append(extra, "'"+d+"'")
		}
	}
	script := strings.ReplaceAll(block, "$HOME/.kube/config", k.env.Kubeconfig)
	script = strings.ReplaceAll(script, "build/tide run --target kubernetes-application",
		"build/tide run --target kubernetes-application "+strings.Join(extra, " "))
	script = strings.ReplaceAll(script, "build/tide", tideBin)
	script = strings.ReplaceAll(script, "kubernetes.namespace=default", "kubernetes.namespace="+k.ns)
	script = strings.ReplaceAll(script, "kubernetes:default/", "kubernetes:"+k.ns+"/")
	script = strings.ReplaceAll(script, "file:///shared/checkpoints", "file://"+t.TempDir())
	script = strings.ReplaceAll(script, "/shared/out", t.TempDir())
	k.id = "tide-count"
	out := runScript(t, t.TempDir(), os.Environ(), script, 5*time.Minute)
	t.Logf("README Kubernetes commands:\n%s", out)
	for _, want := range []string{
		"Submitted cluster tide-count to namespace " + k.ns,
		"Job RUNNING",
		"Detached: cluster tide-count runs in namespace " + k.ns,
		"Cancellation of job ",
		"Removed cluster tide-count from namespace " + k.ns,
	} {
		if !strings.Contains(out, want) {
			t.Errorf("no %q in the output", want)
		}
	}
	if !strings.Contains(out, "CLUSTER ID") || !strings.Contains(out, "CheckableCount") {
		t.Errorf("tide list --target kubernetes did not list the cluster")
	}
	if left := k.leftovers(); len(left) != 0 {
		t.Errorf("after tide cancel: %v", left)
	}
}

// readmeSection is the first ```sh block of a README section.
func readmeSection(t *testing.T, heading string) string {
	t.Helper()
	b, err := os.ReadFile("../../README.md")
	if err != nil {
		t.Fatal(err)
	}
	_, section, ok := strings.Cut(string(b), "\n"+heading+"\n")
	if !ok {
		t.Fatalf("README.md has no section %q", heading)
	}
	_, after, ok := strings.Cut(section, "```sh\n")
	if !ok {
		t.Fatalf("README section %q has no sh block", heading)
	}
	block, _, ok := strings.Cut(after, "```")
	if !ok {
		t.Fatalf("README section %q: unterminated code block", heading)
	}
	return block
}

// TestKubeUnreachableAPIServer: tide run against an API server that does not answer names
// the server and the kubeconfig, and creates nothing. Needs no control plane.
func TestKubeUnreachableAPIServer(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close() // nothing listens there now
	kc := filepath.Join(t.TempDir(), "kubeconfig")
	cfg := fmt.Sprintf(`apiVersion: v1
kind: Config
clusters: [{name: c, cluster: {server: "https://%s", insecure-skip-tls-verify: true}}]
users: [{name: u, user: {token: t}}]
contexts: [{name: c, context: {cluster: c, user: u}}]
current-context: c
`, addr)
	if err := os.WriteFile(kc, []byte(cfg), 0o600); err != nil {
		t.Fatal(err)
	}
	out, err := testkit.RunCommand(context.Background(), time.Minute, os.Environ(), tideBin, "run", "--target", "kubernetes-application",
		"--job-classname", "CheckableCount", "-Dkubernetes.config.file="+kc, "--", "--output", t.TempDir())
	if err == nil {
		t.Fatalf("tide run succeeded against nothing:\n%s", out)
	}
	if !strings.Contains(out, "https://"+addr) || !strings.Contains(out, "kubeconfig "+kc) || !strings.Contains(out, "not reachable") {
		t.Errorf("the error does not name the server and the kubeconfig:\n%s", out)
	}
}

// TestKubeMissingNamespace: a namespace that does not exist is named, with the key.
func TestKubeMissingNamespace(t *testing.T) {
	k := newKubeApp(t)
	args := append([]string{"run", "--target", "kubernetes-application", "--job-classname", "CheckableCount"}, k.podSettings()...)
	args = append(args, "-Dkubernetes.namespace=no-such-namespace-here", "--", "--output", t.TempDir())
	out, err := k.tide(time.Minute, args...)
	if err == nil || !strings.Contains(out, "namespace no-such-namespace-here does not exist (kubernetes.namespace)") {
		t.Errorf("tide run into a missing namespace: %v\n%s", err, out)
	}
}
