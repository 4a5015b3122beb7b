# Shared settings for tide's Kubernetes harness scripts (sourced, not run).
# Every path can be overridden from the environment:
#   KUBE_ENV          env file written once the control plane answers (default <repo>/.cache/kube/env)
#   KUBE_BASE         work dir: etcd data, certs, kubeconfig, logs, pods (default: the env file's dir)
#   KUBE_BIN_DIR      where build-bins.sh put etcd, kube-apiserver, kube-scheduler, kube-controller-manager
#   KUBE_NODES        the process kubelet's nodes (default kube-node-1,kube-node-2,kube-node-3)
#   KUBE_UP_TIMEOUT   seconds to wait for each component (default 180)
KUBE_HARNESS_DIR=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
REPO_ROOT=$(cd "$KUBE_HARNESS_DIR/../.." && pwd)
KUBE_ENV=${KUBE_ENV:-$REPO_ROOT/.cache/kube/env}
case $KUBE_ENV in /*) ;; *) KUBE_ENV=$REPO_ROOT/$KUBE_ENV ;; esac
KUBE_BASE=${KUBE_BASE:-$(dirname "$KUBE_ENV")}
KUBE_NODES=${KUBE_NODES:-kube-node-1,kube-node-2,kube-node-3}
KUBE_UP_TIMEOUT=${KUBE_UP_TIMEOUT:-180}
KUBE_LOG_DIR=$KUBE_BASE/logs
KUBE_KUBELET_DIR=$KUBE_BASE/kubelet
KUBE_PID_DIR=$KUBE_BASE/pids
# Stop order: the kubelet first (it stops the pods), the control plane last.
KUBE_COMPONENTS=(kubelet kube-controller-manager kube-scheduler kube-apiserver etcd)

log() { echo "kube: $*" >&2; }

# component_pid NAME prints the pid of a live component started by up.sh, or fails.
component_pid() {
  local f=$KUBE_PID_DIR/$1.pid pid
  [ -f "$f" ] || return 1
  pid=$(cat "$f")
  [ -n "$pid" ] && kill -0 "$pid" 2>/dev/null && echo "$pid"
}

# env_value KEY prints KEY's value from the env file.
env_value() { sed -n "s/^$1=//p" "$KUBE_ENV"; }

# free_port prints a loopback port that was free a moment ago, below the ephemeral range.
free_port() { python3 "$REPO_ROOT/test/free-port.py"; }
