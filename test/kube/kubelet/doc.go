// Package kubelet is the process kubelet of tide's Kubernetes test harness (`make k8s-up`):
// it registers fake nodes with a real kube-apiserver and runs the pods the real
// kube-scheduler binds to them as local processes, the way a kubelet runs containers.
//
// What it does like a kubelet:
//   - Nodes: one Node per name, labelled kubernetes.io/hostname=<name>, Ready, with
//     allocatable cpu, memory and pods, and no taints.
//   - Pods: each container's command+args runs as a local process in its own process group,
//     with the pod's env: plain values, $(VAR) references (with $$ escaping), downward-API
//     fieldRefs (metadata.name, metadata.namespace, metadata.uid, spec.nodeName,
//     spec.serviceAccountName, status.podIP and status.hostIP (both 127.0.0.1),
//     metadata.labels['k'], metadata.annotations['k']), resourceFieldRefs (limits/requests of
//     cpu and memory), configMapKeyRef, secretKeyRef and envFrom. KUBERNETES_SERVICE_HOST and
//     KUBERNETES_SERVICE_PORT point at the API server, HOSTNAME is the pod name, and
//     KUBECONFIG holds a token of the pod's service account (service_account.go).
//   - Volumes: configMap, secret, downwardAPI (fieldRef items) and emptyDir are materialized
//     in a per-pod host directory with the kubelet's atomic layout (files under a
//     "..<timestamp>" directory, a "..data" symlink to it, and one symlink per key pointing
//     into "..data"); a changed ConfigMap or Secret is swapped in by renaming a new "..data"
//     symlink over the old one, so an fsnotify watcher sees what it sees on a real kubelet.
//   - Status: Pending until the volumes are there, then Running with one containerStatus per
//     container; an exited container is Terminated with its exit code (128+signal for a
//     signal) and reason Completed or Error; with restartPolicy Always (or OnFailure after a
//     failure) the container is started again after a back-off (1 s doubling to 10 s, waiting
//     reason CrashLoopBackOff) and restartCount grows; otherwise the pod ends Succeeded or
//     Failed.
//   - Deletion: a pod with a deletionTimestamp gets SIGTERM on every process group, SIGKILL
//     after its grace period, then is removed with grace period 0 (UID precondition), as the
//     kubelet's status manager does. A pod removed outright has its processes stopped the same
//     way (SIGKILL after 2 s).
//
// The one part that is not real: containers share the host's file system, so a volume's
// mountPath cannot exist at that path. The kubelet maps each volumeMount's mountPath (with
// its subPath) to the volume's host directory by rewriting that path prefix wherever it
// appears in the container's command, args, env values and workingDir (only at path
// boundaries: the prefix must be followed by '/', the end of the string or a character that
// cannot be part of a path). File contents are not rewritten, and a program that builds a
// mount path from pieces at run time does not see the host directory.
//
// Not done: images (the command runs as is; a container without a command fails), init
// containers, probes (containers are ready once started), ports and Services (the process
// listens on the host's loopback), resource limits, projected volumes other than through
// the above, and serving logs to the API server (read the log files instead).
//
// Layout under the kubelet directory (TIDE_KUBE_KUBELET_DIR in the harness's env file):
//
//	pods/<namespace>/<pod>/uid                  the pod's UID
//	pods/<namespace>/<pod>/node                 the node it runs on
//	pods/<namespace>/<pod>/pid                  process id (= process group) of its first container
//	pods/<namespace>/<pod>/<container>.pid      the same for each container
//	pods/<namespace>/<pod>/<container>.log      stdout and stderr, appended across restarts
//	pods/<namespace>/<pod>/volumes/<volume>/    the volume's host directory
//	pods/<namespace>/<pod>/serviceaccount/      token, namespace and kubeconfig of its service account
//
// A pod dir left by an earlier pod of the same name moves to pods/<namespace>/.old/<pod>-<uid>.
// Killing a container the way a crash would is `kill -KILL -<pid>` with the pid file's
// number: the kubelet reports exit code 137.
package kubelet
