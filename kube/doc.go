// Package kube is tide's Kubernetes driver: the AM creates one pod per TaskManager through
// client-go, owned by the AM's pod, and watches them with an informer so a pod that is
// deleted, fails or is evicted is reported lost at once. New pods carry one required
// NodeAffinity term `<kubernetes.node-name-label> NotIn [blocked nodes]`, so the real
// scheduler keeps them off blocked nodes; a pod still pending on (or headed for) a node that
// got blocked is deleted and created again. A restarted AM adopts the running TaskManager
// pods of its cluster by label, as Flink's native Kubernetes driver does.
package kube
