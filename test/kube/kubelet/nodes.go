package kubelet

import (
	"context"
	"fmt"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/util/retry"
)

// nodeStatus is a Ready node with the configured capacity.
func (k *Kubelet) nodeStatus(name string, now metav1.Time) (corev1.NodeStatus, error) {
	res := corev1.ResourceList{}
	for n, v := range map[corev1.ResourceName]string{
		corev1.ResourceCPU: k.cfg.CPU, corev1.ResourceMemory: k.cfg.Memory, corev1.ResourcePods: k.cfg.Pods,
		corev1.ResourceEphemeralStorage: "100Gi",
	} {
		q, err := resource.ParseQuantity(v)
		if err != nil {
			return corev1.NodeStatus{}, fmt.Errorf("node %s: %s %q: %w", name, n, v, err)
		}
		res[n] = q
	}
	return corev1.NodeStatus{
		Capacity:    res,
		Allocatable: res,
		Phase:       corev1.NodeRunning,
		Conditions: []corev1.NodeCondition{
			{Type: corev1.NodeReady, Status: corev1.ConditionTrue, Reason: "KubeletReady", Message: "tide test kubelet is posting ready status",
				LastHeartbeatTime: now, LastTransitionTime: now},
			{Type: corev1.NodeMemoryPressure, Status: corev1.ConditionFalse, Reason: "KubeletHasSufficientMemory", LastHeartbeatTime: now, LastTransitionTime: now},
			{Type: corev1.NodeDiskPressure, Status: corev1.ConditionFalse, Reason: "KubeletHasNoDiskPressure", LastHeartbeatTime: now, LastTransitionTime: now},
			{Type: corev1.NodePIDPressure, Status: corev1.ConditionFalse, Reason: "KubeletHasSufficientPID", LastHeartbeatTime: now, LastTransitionTime: now},
		},
		Addresses: []corev1.NodeAddress{
			{Type: corev1.NodeInternalIP, Address: hostIP},
			{Type: corev1.NodeHostName, Address: name},
		},
		NodeInfo: corev1.NodeSystemInfo{KubeletVersion: "v1.37.2-tide-process-kubelet", OperatingSystem: "linux", Architecture: "amd64"},
	}, nil
}

// registerNodes creates the nodes, or takes over existing ones of the same names (labels,
// taints and status set afresh).
func (k *Kubelet) registerNodes(ctx context.Context) error {
	nodes := k.cfg.Client.CoreV1().Nodes()
	for _, name := range k.cfg.Nodes {
		now := metav1.NewTime(time.Now())
		st, err := k.nodeStatus(name, now)
		if err != nil {
			return err
		}
		lbl := map[string]string{
			corev1.LabelHostname: name, corev1.LabelOSStable: "linux", corev1.LabelArchStable: "amd64",
		}
		n := &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: name, Labels: lbl}, Status: st}
		_, err = nodes.Create(ctx, n, metav1.CreateOptions{})
		if apierrors.IsAlreadyExists(err) {
			err = retry.RetryOnConflict(retry.DefaultRetry, func() error {
				cur, err := nodes.Get(ctx, name, metav1.GetOptions{})
				if err != nil {
					return err
				}
				if cur.Labels == nil {
					cur.Labels = map[string]string{}
				}
				for key, v := range lbl {
					cur.Labels[key] = v
				}
				cur.Spec.Taints, cur.Spec.Unschedulable = nil, false
				cur, err = nodes.Update(ctx, cur, metav1.UpdateOptions{})
				if err != nil {
					return err
				}
				cur.Status = st
				_, err = nodes.UpdateStatus(ctx, cur, metav1.UpdateOptions{})
				return err
			})
		}
		if err != nil {
			return fmt.Errorf("registering node %s: %w", name, err)
		}
		k.log.Info("node registered", "node", name)
	}
	return nil
}

// heartbeat refreshes the Ready condition's heartbeat time, so a node controller (if one
// runs) sees live nodes.
func (k *Kubelet) heartbeat(ctx context.Context) {
	for _, name := range k.cfg.Nodes {
		err := retry.RetryOnConflict(retry.DefaultRetry, func() error {
			cur, err := k.cfg.Client.CoreV1().Nodes().Get(ctx, name, metav1.GetOptions{})
			if err != nil {
				return err
			}
			now := metav1.NewTime(time.Now())
			for i := range cur.Status.Conditions {
				cur.Status.Conditions[i].LastHeartbeatTime = now
			}
			_, err = k.cfg.Client.CoreV1().Nodes().UpdateStatus(ctx, cur, metav1.UpdateOptions{})
			return err
		})
		if err != nil && ctx.Err() == nil {
			k.log.Warn("node heartbeat failed", "node", name, "err", err)
		}
	}
}
