#!/usr/bin/env bash
# Stops what up.sh started: the kubelet first (it SIGTERMs every pod's process group and
# SIGKILLs them after 5 s), then controller-manager, scheduler, apiserver and etcd; then kills
# any pod process the kubelet left (its pid files), and removes the env file, etcd's data and
# the certificates. Logs (logs/) and pod dirs (kubelet/) stay until the next `make k8s-up`.
set -euo pipefail
. "$(dirname "$0")/lib.sh"

for c in "${KUBE_COMPONENTS[@]}"; do
  if pid=$(component_pid "$c"); then
    log "stopping $c (pid $pid)"
    timeout=20
    [ "$c" = kubelet ] && timeout=30
    stop_group "$pid" "$timeout"
  fi
  rm -f "$KUBE_PID_DIR/$c.pid"
done
# A kubelet that was SIGKILLed leaves its pods' processes: each leads its own process group.
if [ -d "$KUBE_KUBELET_DIR/pods" ]; then
  while IFS= read -r f; do
    pid=$(cat "$f" 2>/dev/null || true)
    [[ "$pid" =~ ^[0-9]+$ ]] || continue
    if [ "$(ps -o pgid= -p "$pid" 2>/dev/null | tr -d ' ')" = "$pid" ]; then
      log "stopping leftover pod process $pid ($f)"
      stop_group "$pid" 5
    fi
  done < <(find "$KUBE_KUBELET_DIR/pods" -name '*.pid' -type f)
fi
rm -f "$KUBE_ENV" "$KUBE_ENV.tmp" "$KUBE_BASE/kubelet.ready"
rm -rf "$KUBE_BASE/etcd" "$KUBE_BASE/pki" "$KUBE_BASE/kubeconfig"
log "down"
