package tidecli

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"strings"
	"sync"
	"time"

	"github.com/urfave/cli/v2"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/kubernetes"

	"github.com/tidestream/tide/api"
	"github.com/tidestream/tide/kube"
)

// kubeFollower follows a cluster from tide run: the AM pod, the address it published, the
// job's state through the REST API, and how the job ended (the AM publishes it before it
// removes the cluster).
type kubeFollower struct {
	cs        kubernetes.Interface
	ns        string
	clusterID string
	out       io.Writer
	errOut    io.Writer
	t0        time.Time
	token     string

	mu    sync.Mutex
	final map[string]string // the status ConfigMap's data once the job ended
}

// podProblems are container waiting reasons that do not go away by themselves.
var podProblems = map[string]bool{
	"ErrImagePull": true, "ImagePullBackOff": true, "InvalidImageName": true, "CreateContainerConfigError": true,
	"CreateContainerError": true, "RunContainerError": true, "CrashLoopBackOff": true,
}

func (f *kubeFollower) follow(ctx context.Context, c *cli.Context, stop context.CancelFunc) error {
	go f.watchStatus(ctx)
	var (
		amKey, addr, state, lastProblem string
		running                         bool
		httpc                           = &http.Client{Timeout: 3 * time.Second}
		failures                        failureReporter
	)
	detached := c.Bool("detached")
	tick := time.NewTicker(250 * time.Millisecond)
	defer tick.Stop()
	for {
		select {
		case <-ctx.Done():
			stop()
			return f.interrupted(c)
		case <-tick.C:
		}
		if st := f.ended(); st != nil {
			return f.report(ctx, st)
		}
		_, err := f.cs.AppsV1().Deployments(f.ns).Get(ctx, kube.DeploymentName(f.clusterID), metav1.GetOptions{})
		if apierrors.IsNotFound(err) {
			time.Sleep(time.Second) // the status watch may still deliver the end
			if st := f.ended(); st != nil {
				return f.report(ctx, st)
			}
			return fmt.Errorf("cluster %s: its Deployment was deleted from namespace %s; how the job ended is unknown (last state %s)", f.clusterID, f.ns, orUnknown(state))
		}
		if err != nil {
			slog.Debug("following the cluster", "err", err)
			continue
		}
		pod, err := kube.CurrentAMPod(ctx, f.cs, f.ns, f.clusterID)
		if err != nil || pod == nil {
			continue
		}
		key := fmt.Sprintf("%s/%d", pod.Name, restarts(pod))
		if key != amKey {
			if amKey != "" {
				fmt.Fprintf(f.out, "%s: AM pod %s (restart %d) started; the previous AM is gone\n", f.clusterID, pod.Name, restarts(pod))
			} else {
				fmt.Fprintf(f.out, "%s: AM pod %s\n", f.clusterID, pod.Name)
			}
			amKey = key
		}
		if problem, fatal := amPodProblem(pod); problem != "" && problem != lastProblem {
			lastProblem = problem
			fmt.Fprintf(f.out, "%s: %s\n", f.clusterID, problem)
			if tail := podLogTail(ctx, f.cs, f.ns, pod.Name); tail != "" {
				fmt.Fprintf(f.out, "---- last lines of the AM's log\n%s\n----\n", termSafe(tail))
			}
			if fatal && !running {
				return fmt.Errorf("cluster %s: the AM does not start (%s); its objects stay for inspection (kubectl -n %s describe pod %s); tide cancel -m %s%s removes them",
					f.clusterID, problem, f.ns, pod.Name, kubeTargetPrefix, f.clusterID)
			}
		}
		a, err := kube.RESTAddress(ctx, f.cs, f.ns, f.clusterID)
		if err != nil {
			continue
		}
		if a != addr {
			if addr != "" {
				fmt.Fprintf(f.out, "%s: AM at %s (the previous AM at %s is gone; tide commands with -m %s%s follow it)\n", f.clusterID, a, addr, kubeTargetPrefix, f.clusterID)
			} else {
				fmt.Fprintf(f.out, "%s: AM at %s\n", f.clusterID, a)
			}
			addr = a
		}
		cl, err := api.NewClient(api.Config{Address: addr, Token: f.token, HTTPClient: httpc})
		if err != nil {
			continue
		}
		jobs, err := cl.Jobs(ctx)
		if err != nil || len(jobs) == 0 {
			continue
		}
		if e, ok, _, err := cl.NewestException(ctx, jobs[0].JID); err == nil && ok {
			if line, ok := failures.line(e); ok {
				fmt.Fprintf(f.out, "%s: failure: %s\n", f.clusterID, termSafe(line))
			}
		}
		if s := jobs[0].State; s != state {
			state = s
			fmt.Fprintf(f.out, "%s: job %s\n", f.clusterID, termSafe(s))
			if s == "RUNNING" && !running {
				running = true
				fmt.Fprintf(f.out, "Job RUNNING %s after tide run; REST API at %s\n", time.Since(f.t0).Round(time.Millisecond), addr)
				if detached {
					fmt.Fprintf(f.out, "Detached: cluster %s runs in namespace %s; tide list -m %s%s shows its job, tide cancel -m %s%s stops it and removes the cluster\n",
						f.clusterID, f.ns, kubeTargetPrefix, f.clusterID, kubeTargetPrefix, f.clusterID)
					return nil
				}
			}
		}
	}
}

// watchStatus keeps the status ConfigMap's data once it says the job ended: the AM writes
// that just before it deletes the ConfigMap, so only a watch sees it reliably.
func (f *kubeFollower) watchStatus(ctx context.Context) {
	name := kube.StatusConfigMapName(f.clusterID)
	for ctx.Err() == nil {
		w, err := f.cs.CoreV1().ConfigMaps(f.ns).Watch(ctx, metav1.ListOptions{FieldSelector: fields.OneTermEqualSelector("metadata.name", name).String()})
		if err != nil {
			select {
			case <-ctx.Done():
				return
			case <-time.After(time.Second):
			}
			continue
		}
		for ev := range w.ResultChan() {
			cm, ok := ev.Object.(*corev1.ConfigMap)
			if !ok || cm.Name != name || (ev.Type != watch.Added && ev.Type != watch.Modified && ev.Type != watch.Deleted) {
				continue
			}
			if cm.Data[kube.StatusJobState] != "" {
				f.mu.Lock()
				f.final = cm.Data
				f.mu.Unlock()
			}
		}
		w.Stop()
	}
}

func (f *kubeFollower) ended() map[string]string {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.final
}

// report prints how the job ended, last, once the AM removed the cluster.
func (f *kubeFollower) report(ctx context.Context, st map[string]string) error {
	wctx, cancel := context.WithTimeout(ctx, time.Minute)
	defer cancel()
	for {
		left, err := kube.Leftovers(wctx, f.cs, f.ns, f.clusterID)
		if err == nil && len(left) == 0 {
			fmt.Fprintf(f.out, "Cluster %s removed from namespace %s\n", f.clusterID, f.ns)
			break
		}
		if wctx.Err() != nil {
			fmt.Fprintf(f.out, "Cluster %s: still in namespace %s after the job ended: %s (tide cancel -m %s%s removes them)\n",
				f.clusterID, f.ns, strings.Join(left, ", "), kubeTargetPrefix, f.clusterID)
			break
		}
		time.Sleep(250 * time.Millisecond)
	}
	state, diag := st[kube.StatusJobState], st[kube.StatusDiagnostics]
	fmt.Fprintf(f.out, "%s: job %s (%s)\n", f.clusterID, termSafe(state), termSafe(diag))
	if state != "FINISHED" && state != "CANCELED" {
		return fmt.Errorf("cluster %s: job %s: %s", f.clusterID, state, diag)
	}
	return nil
}

// interrupted handles Ctrl-C: with --cancel-on-exit the cluster is cancelled and removed,
// otherwise it runs on.
func (f *kubeFollower) interrupted(c *cli.Context) error {
	if !c.Bool("cancel-on-exit") {
		fmt.Fprintf(f.out, "Interrupted: cluster %s keeps running (tide run --cancel-on-exit removes it on Ctrl-C).\n", f.clusterID)
		fmt.Fprintf(f.out, "Stop it with: tide cancel -m %s%s\n", kubeTargetPrefix, f.clusterID)
		return nil
	}
	ctx, cancel := context.WithTimeout(context.WithoutCancel(c.Context), 2*time.Minute)
	defer cancel()
	fmt.Fprintf(f.out, "Interrupted: cancelling cluster %s (--cancel-on-exit)\n", f.clusterID)
	_, err := cancelKubeCluster(ctx, f.cs, f.ns, f.clusterID, "", f.out, time.Minute)
	return err
}

func restarts(p *corev1.Pod) int32 {
	var n int32
	for _, cs := range p.Status.ContainerStatuses {
		n += cs.RestartCount
	}
	return n
}

// amPodProblem describes what keeps the AM pod from running; fatal when it will not go
// away by itself (a bad image, a command that does not run, a missing Secret) or the
// container exited with an error.
func amPodProblem(p *corev1.Pod) (string, bool) {
	if p.Status.Phase == corev1.PodFailed {
		msg := fmt.Sprintf("AM pod %s failed", p.Name)
		if p.Status.Reason != "" {
			msg += ": " + p.Status.Reason
		}
		if p.Status.Message != "" {
			msg += ": " + p.Status.Message
		}
		for _, cs := range p.Status.ContainerStatuses {
			if t := cs.State.Terminated; t != nil {
				msg += fmt.Sprintf(" (container %s exited with code %d, %s%s)", cs.Name, t.ExitCode, t.Reason, msgSuffix(t.Message))
			}
		}
		return msg, true
	}
	for _, cs := range p.Status.ContainerStatuses {
		if w := cs.State.Waiting; w != nil && podProblems[w.Reason] {
			last := ""
			if t := cs.LastTerminationState.Terminated; t != nil {
				last = fmt.Sprintf("; it last exited with code %d (%s%s)", t.ExitCode, t.Reason, msgSuffix(t.Message))
			}
			return fmt.Sprintf("AM pod %s: container %s %s%s%s", p.Name, cs.Name, w.Reason, msgSuffix(w.Message), last), true
		}
		if t := cs.State.Terminated; t != nil && t.ExitCode != 0 {
			return fmt.Sprintf("AM pod %s: container %s exited with code %d (%s%s)", p.Name, cs.Name, t.ExitCode, t.Reason, msgSuffix(t.Message)), true
		}
	}
	for _, c := range p.Status.Conditions {
		if c.Type == corev1.PodScheduled && c.Status == corev1.ConditionFalse && c.Reason == corev1.PodReasonUnschedulable {
			return fmt.Sprintf("AM pod %s cannot be scheduled: %s", p.Name, c.Message), false
		}
	}
	return "", false
}

func msgSuffix(m string) string {
	if m == "" {
		return ""
	}
	return ": " + strings.TrimSpace(m)
}

// podLogTail is the last lines of a pod's log where the kubelet serves it ("" otherwise).
func podLogTail(ctx context.Context, cs kubernetes.Interface, ns, pod string) string {
	lines := int64(20)
	ctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	b, err := cs.CoreV1().Pods(ns).GetLogs(pod, &corev1.PodLogOptions{TailLines: &lines}).DoRaw(ctx)
	if err != nil {
		slog.Debug("no log of the AM pod", "pod", pod, "err", err)
		return ""
	}
	return strings.TrimRight(string(b), "\n")
}

func orUnknown(s string) string {
	if s == "" {
		return "unknown"
	}
	return s
}
