package kube

import (
	"fmt"
	"strings"

	corev1 "k8s.io/api/core/v1"
)

// scheduled: the scheduler bound the pod (PodScheduled=True, or a node name is set).
func scheduled(p *corev1.Pod) bool {
	if p.Spec.NodeName != "" {
		return true
	}
	for _, c := range p.Status.Conditions {
		if c.Type == corev1.PodScheduled && c.Status == corev1.ConditionTrue {
			return true
		}
	}
	return false
}

// terminated: the pod failed or ended, or one of its containers terminated (Flink's
// KubernetesPod.isTerminated); with restartPolicy Never it never comes back.
func terminated(p *corev1.Pod) bool {
	if p.Status.Phase == corev1.PodFailed || p.Status.Phase == corev1.PodSucceeded {
		return true
	}
	for _, cs := range p.Status.ContainerStatuses {
		if cs.State.Terminated != nil {
			return true
		}
	}
	return false
}

// deleting: someone asked for the pod to go (a delete, an eviction, a drain).
func deleting(p *corev1.Pod) bool { return p.DeletionTimestamp != nil }

// Where a TaskManager pod that has not registered is (drivers.PendingWorker.State).
const (
	stateRequested  = "Requested"  // created, not placed by the scheduler
	stateScheduled  = "Scheduled"  // bound to a node, its container not running
	stateRunning    = "Running"    // running, its TaskManager not registered yet
	stateRecreating = "Recreating" // deleted to be created again off a blocked node
)

// podWaiting says where a pod is and why it waits: the scheduler's PodScheduled=False
// reason and message (Unschedulable, SchedulingGated) while it is not placed, a container's
// waiting reason (ContainerCreating, CrashLoopBackOff, ...) once it is.
func podWaiting(p *corev1.Pod) (state, reason, message string) {
	if !scheduled(p) {
		for _, c := range p.Status.Conditions {
			if c.Type == corev1.PodScheduled && c.Status == corev1.ConditionFalse {
				return stateRequested, c.Reason, c.Message
			}
		}
		return stateRequested, "", ""
	}
	for _, cs := range p.Status.ContainerStatuses {
		if w := cs.State.Waiting; w != nil && w.Reason != "" {
			return stateScheduled, w.Reason, w.Message
		}
	}
	if p.Status.Phase == corev1.PodRunning {
		return stateRunning, "", ""
	}
	return stateScheduled, "", ""
}

// diagnostics says why a pod is gone: its phase and reason, each terminated container's
// exit code and reason.
func diagnostics(p *corev1.Pod) string {
	parts := []string{fmt.Sprintf("pod %s phase %s", p.Name, p.Status.Phase)}
	if p.Status.Reason != "" {
		parts = append(parts, "reason "+p.Status.Reason)
	}
	if p.Status.Message != "" {
		parts = append(parts, p.Status.Message)
	}
	for _, cs := range p.Status.ContainerStatuses {
		if t := cs.State.Terminated; t != nil {
			parts = append(parts, fmt.Sprintf("container %s exited with code %d (%s)", cs.Name, t.ExitCode, t.Reason))
		}
	}
	if p.DeletionTimestamp != nil {
		parts = append(parts, "deleted")
	}
	return strings.Join(parts, ", ")
}
