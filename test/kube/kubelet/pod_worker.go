package kubelet

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
)

// goneGrace is how long the processes of a pod removed outright (grace period 0, or a
// missed deletion) get between SIGTERM and SIGKILL.
const goneGrace = 2 * time.Second

// podWorker runs one pod (one UID) on its own goroutine: every event for the pod pokes it,
// and it compares the pod as the informer has it with the processes it runs.
type podWorker struct {
	k        *Kubelet
	uid      types.UID
	ns, name string
	dir      string
	wake     chan struct{}

	mu        sync.Mutex // guards the sets below, read by the kubelet's event handlers
	cms, secs map[string]bool

	started    bool
	startedAt  time.Time
	kubeconfig string // the pod's service-account kubeconfig, "" for none
	containers []*containerRun
	lastStatus *corev1.PodStatus
	waitReason string
	waitMsg    string
	retryAt    time.Time
}

// containerRun is one container of the pod across its restarts.
type containerRun struct {
	spec     corev1.Container
	proc     *process
	restarts int32
	// last is the previous run's end (lastState), term the current one's when it ended
	// and will not run again.
	last, term *corev1.ContainerStateTerminated
	restartAt  time.Time
	backoff    time.Duration
}

func newPodWorker(k *Kubelet, p *corev1.Pod) *podWorker {
	w := &podWorker{k: k, uid: p.UID, ns: p.Namespace, name: p.Name, dir: PodDir(k.cfg.Dir, p.Namespace, p.Name),
		wake: make(chan struct{}, 1), cms: map[string]bool{}, secs: map[string]bool{}}
	for _, v := range p.Spec.Volumes {
		if v.ConfigMap != nil {
			w.cms[v.ConfigMap.Name] = true
		}
		if v.Secret != nil {
			w.secs[v.Secret.SecretName] = true
		}
	}
	for _, c := range p.Spec.Containers {
		w.containers = append(w.containers, &containerRun{spec: c})
	}
	return w
}

func (w *podWorker) poke() {
	select {
	case w.wake <- struct{}{}:
	default:
	}
}

func (w *podWorker) uses(name string, secret bool) bool {
	w.mu.Lock()
	defer w.mu.Unlock()
	if secret {
		return w.secs[name]
	}
	return w.cms[name]
}

func (w *podWorker) key() string { return w.ns + "/" + w.name }

func (w *podWorker) run() {
	defer w.k.wg.Done()
	ctx := w.k.ctx
	tick := time.NewTicker(250 * time.Millisecond) // restart back-offs and retries
	defer tick.Stop()
	for {
		select {
		case <-ctx.Done():
			w.stopAll(5 * time.Second)
			return
		case <-w.wake:
		case <-tick.C:
			if !w.due() {
				continue
			}
		}
		if w.sync(ctx) {
			w.k.finished(w)
			return
		}
	}
}

// due reports whether a timed step is due: a restart or a retry. (An exited process pokes
// the worker itself.)
func (w *podWorker) due() bool {
	now := time.Now()
	if !w.retryAt.IsZero() && !now.Before(w.retryAt) {
		return true
	}
	for _, c := range w.containers {
		if !c.restartAt.IsZero() && !now.Before(c.restartAt) {
			return true
		}
	}
	return false
}

// sync brings the processes in line with the pod; true when the worker is done.
func (w *podWorker) sync(ctx context.Context) bool {
	p, err := w.k.pods.Pods(w.ns).Get(w.name)
	if err != nil || p.UID != w.uid {
		// Removed outright (or replaced by a pod of the same name).
		w.stopAll(goneGrace)
		w.k.log.Info("pod gone", "pod", w.key(), "uid", w.uid)
		return true
	}
	if p.DeletionTimestamp != nil {
		w.terminate(ctx, p)
		return true
	}
	if !w.started {
		if terminal(p.Status.Phase) {
			return false // ended before this kubelet saw it: nothing to run
		}
		w.start(ctx, p)
	} else {
		w.refreshVolumes(p)
		w.reap()
		w.restart(p)
	}
	w.report(ctx, p)
	return false
}

func terminal(ph corev1.PodPhase) bool { return ph == corev1.PodSucceeded || ph == corev1.PodFailed }

// start prepares the pod dir and volumes and starts every container; a missing ConfigMap or
// Secret leaves the pod in ContainerCreating and is tried again.
func (w *podWorker) start(ctx context.Context, p *corev1.Pod) {
	w.retryAt = time.Time{}
	if w.startedAt.IsZero() {
		if err := w.prepareDir(p); err != nil {
			w.wait("CreateContainerConfigError", err.Error())
			return
		}
		w.startedAt = time.Now()
	}
	if err := w.k.syncVolumes(p, w.dir); err != nil {
		var nr errNotReady
		if errors.As(err, &nr) {
			w.wait("ContainerCreating", err.Error())
		} else {
			w.wait("CreateContainerConfigError", err.Error())
		}
		return
	}
	kubeconfig, err := w.k.serviceAccountKubeconfig(ctx, p, w.dir)
	if err != nil {
		var nr errNotReady
		if errors.As(err, &nr) {
			w.wait("ContainerCreating", err.Error())
		} else {
			w.wait("CreateContainerConfigError", err.Error())
		}
		return
	}
	w.kubeconfig = kubeconfig
	type ready struct {
		c    *containerRun
		argv []string
		env  []string
		dir  string
	}
	var all []ready
	for _, c := range w.containers {
		argv, env, dir, err := w.k.commandLine(p, &c.spec, w.dir, w.kubeconfig)
		if err != nil {
			var nr errNotReady
			if errors.As(err, &nr) {
				w.wait("ContainerCreating", err.Error())
			} else {
				w.wait("CreateContainerConfigError", fmt.Sprintf("container %s: %v", c.spec.Name, err))
			}
			return
		}
		all = append(all, ready{c, argv, env, dir})
	}
	w.started, w.waitReason, w.waitMsg = true, "", ""
	for i, r := range all {
		w.launch(r.c, r.argv, r.env, r.dir, i == 0)
	}
}

// wait records why the pod cannot start yet and when to try again.
func (w *podWorker) wait(reason, msg string) {
	if msg != w.waitMsg {
		w.k.log.Warn("pod cannot start yet", "pod", w.key(), "reason", reason, "message", msg)
	}
	w.waitReason, w.waitMsg = reason, msg
	w.retryAt = time.Now().Add(time.Second)
}

// prepareDir makes the pod dir, moving aside one left by an earlier pod of the same name.
func (w *podWorker) prepareDir(p *corev1.Pod) error {
	if b, err := os.ReadFile(filepath.Join(w.dir, "uid")); err == nil && string(b) != string(p.UID) {
		old := filepath.Join(filepath.Dir(w.dir), ".old", w.name+"-"+string(b))
		if err := os.MkdirAll(filepath.Dir(old), 0o755); err != nil {
			return err
		}
		if err := os.Rename(w.dir, old); err != nil {
			return fmt.Errorf("moving the dir of an earlier pod %s aside: %w", w.key(), err)
		}
	}
	if err := os.MkdirAll(w.dir, 0o755); err != nil {
		return err
	}
	if err := os.WriteFile(filepath.Join(w.dir, "uid"), []byte(p.UID), 0o644); err != nil {
		return err
	}
	return os.WriteFile(filepath.Join(w.dir, "node"), []byte(p.Spec.NodeName), 0o644)
}

// commandLine is the container's argv, environment and working dir with $(VAR) expanded
// and mount paths mapped to host dirs.
func (k *Kubelet) commandLine(p *corev1.Pod, c *corev1.Container, podDir, kubeconfig string) ([]string, []string, string, error) {
	order, vals, err := k.containerEnv(p, c)
	if err != nil {
		return nil, nil, "", err
	}
	rw := newRewriter(mounts(c, podDir))
	lookup := func(n string) (string, bool) { v, ok := vals[n]; return v, ok }
	argv := make([]string, 0, len(c.Command)+len(c.Args))
	for _, a := range append(append([]string(nil), c.Command...), c.Args...) {
		argv = append(argv, rw.rewrite(expand(a, lookup)))
	}
	if len(c.Command) == 0 {
		return nil, nil, "", errors.New("no command: the test kubelet runs no images, so every container needs a command")
	}
	env := append([]string(nil), k.cfg.BaseEnv...)
	env = append(env, "HOSTNAME="+p.Name)
	if k.cfg.APIServerHost != "" {
		env = append(env, "KUBERNETES_SERVICE_HOST="+k.cfg.APIServerHost, "KUBERNETES_SERVICE_PORT="+k.cfg.APIServerPort)
	}
	if _, own := vals["KUBECONFIG"]; kubeconfig != "" && !own {
		env = append(env, "KUBECONFIG="+kubeconfig)
	}
	for _, n := range order {
		env = append(env, n+"="+rw.rewrite(vals[n]))
	}
	dir := podDir
	if c.WorkingDir != "" {
		dir = rw.rewrite(c.WorkingDir)
		if err := os.MkdirAll(dir, 0o755); err != nil {
			return nil, nil, "", fmt.Errorf("workingDir %s: %w", c.WorkingDir, err)
		}
	}
	return argv, env, dir, nil
}

func (w *podWorker) launch(c *containerRun, argv, env []string, dir string, first bool) {
	logPath := filepath.Join(w.dir, c.spec.Name+".log")
	proc, err := startProcess(argv, env, dir, logPath, func(*process) { w.poke() })
	if err != nil {
		w.k.log.Warn("container did not start", "pod", w.key(), "container", c.spec.Name, "err", err)
		now := metav1.Now()
		c.term = &corev1.ContainerStateTerminated{ExitCode: 128, Reason: "StartError", Message: err.Error(), StartedAt: now, FinishedAt: now}
		return
	}
	c.proc, c.term = proc, nil
	pid := []byte(strconv.Itoa(proc.pid()))
	_ = os.WriteFile(filepath.Join(w.dir, c.spec.Name+".pid"), pid, 0o644)
	if first {
		_ = os.WriteFile(filepath.Join(w.dir, "pid"), pid, 0o644)
	}
	w.k.log.Info("container started", "pod", w.key(), "container", c.spec.Name, "pid", proc.pid(), "restarts", c.restarts)
}

// reap records the containers whose process ended.
func (w *podWorker) reap() {
	for _, c := range w.containers {
		if c.proc == nil {
			continue
		}
		select {
		case <-c.proc.done:
		default:
			continue
		}
		reason := "Completed"
		if c.proc.code != 0 {
			reason = "Error"
		}
		c.term = &corev1.ContainerStateTerminated{
			ExitCode: c.proc.code, Reason: reason,
			StartedAt: metav1.NewTime(c.proc.started), FinishedAt: metav1.NewTime(c.proc.finished),
			ContainerID: containerID(c.proc),
		}
		w.k.log.Info("container exited", "pod", w.key(), "container", c.spec.Name, "code", c.proc.code)
		c.proc = nil
	}
}

// restart starts again, after a back-off, the ended containers the restart policy keeps.
func (w *podWorker) restart(p *corev1.Pod) {
	for i, c := range w.containers {
		if c.term == nil || c.proc != nil {
			continue
		}
		pol := p.Spec.RestartPolicy
		if pol == corev1.RestartPolicyNever || (pol == corev1.RestartPolicyOnFailure && c.term.ExitCode == 0) {
			continue
		}
		if c.restartAt.IsZero() {
			if c.backoff == 0 {
				c.backoff = w.k.cfg.RestartBackoff
			} else {
				c.backoff = min(2*c.backoff, w.k.cfg.MaxRestartBackoff)
			}
			c.restartAt = time.Now().Add(c.backoff)
			continue
		}
		if time.Now().Before(c.restartAt) {
			continue
		}
		argv, env, dir, err := w.k.commandLine(p, &c.spec, w.dir, w.kubeconfig)
		if err != nil {
			w.k.log.Warn("container cannot restart", "pod", w.key(), "container", c.spec.Name, "err", err)
			c.restartAt = time.Now().Add(c.backoff)
			continue
		}
		c.last, c.restartAt = c.term, time.Time{}
		c.restarts++
		w.launch(c, argv, env, dir, i == 0)
	}
}

// refreshVolumes swaps in changed ConfigMaps and Secrets.
func (w *podWorker) refreshVolumes(p *corev1.Pod) {
	if err := w.k.syncVolumes(p, w.dir); err != nil {
		w.k.log.Warn("cannot update the pod's volumes", "pod", w.key(), "err", err)
	}
}

// terminate stops a deleted pod's containers within its grace period, reports them ended
// and removes the pod for good.
func (w *podWorker) terminate(ctx context.Context, p *corev1.Pod) {
	grace := 30 * time.Second
	if p.DeletionGracePeriodSeconds != nil {
		grace = time.Duration(*p.DeletionGracePeriodSeconds) * time.Second
	} else if p.Spec.TerminationGracePeriodSeconds != nil {
		grace = time.Duration(*p.Spec.TerminationGracePeriodSeconds) * time.Second
	}
	w.k.log.Info("pod deleted: stopping its containers", "pod", w.key(), "grace", grace)
	w.stopAll(grace)
	w.reap()
	w.report(ctx, p)
	zero := int64(0)
	uid := w.uid
	err := w.k.cfg.Client.CoreV1().Pods(w.ns).Delete(ctx, w.name, metav1.DeleteOptions{
		GracePeriodSeconds: &zero, Preconditions: &metav1.Preconditions{UID: &uid}})
	if err != nil && !apierrors.IsNotFound(err) && !apierrors.IsConflict(err) && ctx.Err() == nil {
		w.k.log.Warn("cannot remove the deleted pod", "pod", w.key(), "err", err)
	}
}

// stopAll stops every running container of the pod.
func (w *podWorker) stopAll(grace time.Duration) {
	var wg sync.WaitGroup
	for _, c := range w.containers {
		if c.proc == nil {
			continue
		}
		wg.Add(1)
		go func(pr *process) {
			defer wg.Done()
			pr.stop(grace)
		}(c.proc)
	}
	wg.Wait()
}

func containerID(p *process) string { return "process://" + strconv.Itoa(p.pid()) }

// status is the pod's status as this worker sees it.
func (w *podWorker) status(p *corev1.Pod) corev1.PodStatus {
	st := corev1.PodStatus{Phase: corev1.PodPending, HostIP: hostIP, HostIPs: []corev1.HostIP{{IP: hostIP}}}
	if !w.startedAt.IsZero() {
		t := metav1.NewTime(w.startedAt)
		st.StartTime = &t
	}
	running, ended, failed := 0, 0, false
	for _, c := range w.containers {
		cs := corev1.ContainerStatus{Name: c.spec.Name, Image: c.spec.Image, ImageID: "process://" + c.spec.Image, RestartCount: c.restarts, LastTerminationState: corev1.ContainerState{Terminated: c.last}}
		f := false
		cs.Started = &f
		switch {
		case c.proc != nil:
			cs.State.Running = &corev1.ContainerStateRunning{StartedAt: metav1.NewTime(c.proc.started)}
			cs.Ready, cs.ContainerID = true, containerID(c.proc)
			t := true
			cs.Started = &t
			running++
		case c.term != nil && !c.restartAt.IsZero():
			cs.State.Waiting = &corev1.ContainerStateWaiting{Reason: "CrashLoopBackOff",
				Message: fmt.Sprintf("back-off %s restarting failed container=%s pod=%s_%s(%s)", c.backoff, c.spec.Name, w.name, w.ns, w.uid)}
			cs.LastTerminationState.Terminated = c.term
		case c.term != nil:
			cs.State.Terminated = c.term
			cs.ContainerID = c.term.ContainerID
			ended++
			failed = failed || c.term.ExitCode != 0
		default:
			reason, msg := "ContainerCreating", ""
			if w.waitReason != "" {
				reason, msg = w.waitReason, w.waitMsg
			}
			cs.State.Waiting = &corev1.ContainerStateWaiting{Reason: reason, Message: msg}
		}
		st.ContainerStatuses = append(st.ContainerStatuses, cs)
	}
	if w.started {
		st.PodIP, st.PodIPs = hostIP, []corev1.PodIP{{IP: hostIP}}
		st.Phase = corev1.PodRunning
		if ended == len(w.containers) {
			st.Phase = corev1.PodSucceeded
			if failed {
				st.Phase = corev1.PodFailed
			}
		}
	}
	cond := func(t corev1.PodConditionType, ok bool, reason string) corev1.PodCondition {
		c := corev1.PodCondition{Type: t, Status: corev1.ConditionFalse, Reason: reason}
		if ok {
			c.Status, c.Reason = corev1.ConditionTrue, ""
		}
		for _, old := range p.Status.Conditions {
			if old.Type == t && old.Status == c.Status {
				c.LastTransitionTime = old.LastTransitionTime
			}
		}
		if c.LastTransitionTime.IsZero() {
			c.LastTransitionTime = metav1.Now()
		}
		return c
	}
	allReady := w.started && running == len(w.containers)
	notReady := "ContainersNotReady"
	if terminal(st.Phase) {
		notReady = "PodCompleted"
	}
	st.Conditions = []corev1.PodCondition{
		cond(corev1.PodReadyToStartContainers, w.started, ""),
		cond(corev1.PodInitialized, true, ""),
		cond(corev1.ContainersReady, allReady, notReady),
		cond(corev1.PodReady, allReady, notReady),
	}
	for _, c := range p.Status.Conditions {
		if c.Type == corev1.PodScheduled {
			st.Conditions = append(st.Conditions, c)
		}
	}
	return st
}

// report writes the pod's status when it changed.
func (w *podWorker) report(ctx context.Context, p *corev1.Pod) {
	st := w.status(p)
	if w.lastStatus != nil && sameStatus(*w.lastStatus, st) {
		return
	}
	cur := p.DeepCopy()
	cur.Status = st
	for {
		_, err := w.k.cfg.Client.CoreV1().Pods(w.ns).UpdateStatus(ctx, cur, metav1.UpdateOptions{})
		if err == nil {
			w.lastStatus = &st
			return
		}
		if !apierrors.IsConflict(err) {
			if !apierrors.IsNotFound(err) && ctx.Err() == nil {
				w.k.log.Warn("cannot update pod status", "pod", w.key(), "err", err)
				w.retryAt = time.Now().Add(time.Second)
			}
			return
		}
		fresh, err := w.k.cfg.Client.CoreV1().Pods(w.ns).Get(ctx, w.name, metav1.GetOptions{})
		if err != nil || fresh.UID != w.uid {
			return
		}
		st = w.status(fresh)
		cur = fresh
		cur.Status = st
	}
}

// sameStatus compares what the worker sets (times of conditions aside).
func sameStatus(a, b corev1.PodStatus) bool {
	if a.Phase != b.Phase || len(a.ContainerStatuses) != len(b.ContainerStatuses) || len(a.Conditions) != len(b.Conditions) {
		return false
	}
	for i := range a.Conditions {
		if a.Conditions[i].Type != b.Conditions[i].Type || a.Conditions[i].Status != b.Conditions[i].Status {
			return false
		}
	}
	for i := range a.ContainerStatuses {
		x, y := a.ContainerStatuses[i], b.ContainerStatuses[i]
		if x.RestartCount != y.RestartCount || x.Ready != y.Ready || stateKey(x.State) != stateKey(y.State) {
			return false
		}
	}
	return true
}

func stateKey(s corev1.ContainerState) string {
	switch {
	case s.Running != nil:
		return "running " + s.Running.StartedAt.String()
	case s.Terminated != nil:
		return fmt.Sprintf("terminated %d %s", s.Terminated.ExitCode, s.Terminated.Reason)
	case s.Waiting != nil:
		return "waiting " + s.Waiting.Reason + " " + strings.TrimSpace(s.Waiting.Message)
	}
	return ""
}
