// Command tide-kubelet is the process kubelet of tide's Kubernetes test harness: it
// registers fake nodes with a real API server and runs the pods bound to them as local
// processes (see package github.com/tidestream/tide/test/kube/kubelet). `make k8s-up`
// starts it; SIGTERM stops every container process it runs, then it exits.
package main

import (
	"context"
	"flag"
	"fmt"
	"log/slog"
	"net"
	"net/url"
	"os"
	"os/signal"
	"strings"
	"syscall"
	"time"

	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/clientcmd"

	"github.com/tidestream/tide/test/kube/kubelet"
)

func main() {
	if err := run(); err != nil {
		fmt.Fprintln(os.Stderr, "tide-kubelet:", err)
		os.Exit(1)
	}
}

func run() error {
	kubeconfig := flag.String("kubeconfig", os.Getenv("KUBECONFIG"), "kubeconfig of the API server")
	nodes := flag.String("nodes", "kube-node-1,kube-node-2,kube-node-3", "comma-separated node names")
	dir := flag.String("dir", "", "directory of the pod dirs (required)")
	cpu := flag.String("cpu", "16", "cpu capacity of every node")
	mem := flag.String("memory", "64Gi", "memory capacity of every node")
	pods := flag.String("pods", "110", "pod capacity of every node")
	ready := flag.String("ready-file", "", "file written once the nodes are registered and pods listed")
	pass := flag.String("pass-env", "PATH,HOME,TMPDIR,LANG,TZ,GORACE,GOCOVERDIR,GOTRACEBACK",
		"variables of this process's environment every container starts with")
	backoff := flag.Duration("restart-backoff", time.Second, "first wait before a container of a restartPolicy Always/OnFailure pod starts again")
	maxBackoff := flag.Duration("max-restart-backoff", 10*time.Second, "longest wait before a restart")
	verbose := flag.Bool("v", false, "debug logging")
	flag.Parse()
	if *dir == "" {
		return fmt.Errorf("--dir is required")
	}
	level := slog.LevelInfo
	if *verbose {
		level = slog.LevelDebug
	}
	log := slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: level}))
	rc, err := clientcmd.BuildConfigFromFlags("", *kubeconfig)
	if err != nil {
		return fmt.Errorf("kubeconfig %q: %w", *kubeconfig, err)
	}
	rc.QPS, rc.Burst = 200, 400
	cs, err := kubernetes.NewForConfig(rc)
	if err != nil {
		return err
	}
	u, err := url.Parse(rc.Host)
	if err != nil {
		return fmt.Errorf("API server address %q: %w", rc.Host, err)
	}
	host, port, err := net.SplitHostPort(u.Host)
	if err != nil {
		return fmt.Errorf("API server address %q: %w", rc.Host, err)
	}
	var base []string
	for _, k := range strings.Split(*pass, ",") {
		if v, ok := os.LookupEnv(strings.TrimSpace(k)); ok && k != "" {
			base = append(base, k+"="+v)
		}
	}
	k, err := kubelet.New(kubelet.Config{
		Client: cs, Nodes: strings.Split(*nodes, ","), Dir: *dir,
		CPU: *cpu, Memory: *mem, Pods: *pods,
		APIServerHost: host, APIServerPort: port, APIServerURL: rc.Host, BaseEnv: base,
		RestartBackoff: *backoff, MaxRestartBackoff: *maxBackoff, Logger: log,
	})
	if err != nil {
		return err
	}
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM, syscall.SIGINT)
	defer stop()
	return k.Run(ctx, func() {
		if *ready != "" {
			if err := os.WriteFile(*ready, []byte(fmt.Sprintln(os.Getpid())), 0o644); err != nil {
				log.Error("cannot write the ready file", "file", *ready, "err", err)
			}
		}
	})
}
