#!/usr/bin/env bash
# Stops what up.sh started: the kubelet first (it SIGTERMs every pod's process group and
# SIGKILLs them after 5 s), then controller-manager, scheduler, apiserver and etcd; then kills
# any pod process the kubelet left (its pid files), and removes the env file, etcd's data and
# the certificates. Logs (logs/) and pod dirs (kubelet/) stay until the next `make k8s-up`.
# Each component and each pod process leads its own process group (setsid): test/stop-pids.sh -g
# stops the whole group (SIGTERM, SIGKILL after the timeout), as the other harnesses' down.sh do.
set -euo pipefail
. "$(dirname "$0")/lib.sh"
stop_pids=$KUBE_HARNESS_DIR/../stop-pids.sh

for c in "${KUBE_COMPONENTS[@]}"; do
  if pid=$(component_pid "$c"); then
    timeout=20
    [ "$c" = kubelet ] && timeout=30
    "$stop_pids" -g "kube: $c" "$timeout" "$pid"
  fi
  rm -f "$KUBE_PID_DIR/$c.pid"
done
# A kubelet that was SIGKILLed leaves its pods' processes: each leads its own process group.
if [ -d "$KUBE_KUBELET_DIR/pods" ]; then
  leftover=()
  while IFS= read -r f; do
    pid=$(cat "$f" 2>/dev/null || true)
    [[ "$pid" =~ ^[1-9][0-9]*$ ]] || continue
    if [ "$(ps -o pgid= -p "$pid" 2>/dev/null | tr -d ' ')" = "$pid" ]; then
      log "leftover pod process $pid ($f)"
      leftover+=("$pid")
    fi
  done < <(find "$KUBE_KUBELET_DIR/pods" -name '*.pid' -type f)
  if [ ${#leftover[@]} -gt 0 ]; then
    "$stop_pids" -g "kube: leftover pod" 5 "${leftover[@]}"
  fi
fi
rm -f "$KUBE_ENV" "$KUBE_ENV.tmp" "$KUBE_BASE/kubelet.ready"
rm -rf "$KUBE_BASE/etcd" "$KUBE_BASE/pki" "$KUBE_BASE/kubeconfig"
log "down"
