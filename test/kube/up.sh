#!/usr/bin/env bash
# Starts a Kubernetes control plane on loopback for tide's tests: etcd, kube-apiserver,
# kube-scheduler, kube-controller-manager (deployment, replicaset, garbage collector,
# namespace and serviceaccount controllers only) and the process kubelet with its fake nodes;
# waits until each answers and writes the env file the Go tests read ($KUBE_ENV). Idempotent:
# when the harness already runs, prints its env file. See test/kube/README.md.
set -euo pipefail
. "$(dirname "$0")/lib.sh"

if [ -f "$KUBE_ENV" ] && component_pid kubelet >/dev/null && component_pid kube-apiserver >/dev/null &&
  curl -skf -m 5 -H "Authorization: Bearer $(env_value TIDE_KUBE_TOKEN)" "$(env_value TIDE_KUBE_APISERVER)/readyz" >/dev/null; then
  log "already up"
  cat "$KUBE_ENV"
  exit 0
fi
for c in "${KUBE_COMPONENTS[@]}"; do
  if component_pid "$c" >/dev/null; then
    log "stale harness without a working env file; stopping it"
    "$KUBE_HARNESS_DIR/down.sh"
    break
  fi
done

start=$(date +%s.%N)
elapsed() { awk -v a="$start" -v b="$(date +%s.%N)" 'BEGIN{printf "%.1f", b-a}'; }
BIN=$("$KUBE_HARNESS_DIR/build-bins.sh" | tail -n 1)
log "binaries in $BIN ($(elapsed) s)"
mkdir -p "$KUBE_BASE/bin"
(cd "$REPO_ROOT" && go build -o "$KUBE_BASE/bin/tide-kubelet" ./test/kube/kubelet/cmd/tide-kubelet)
log "kubelet built ($(elapsed) s)"

rm -f "$KUBE_ENV"
rm -rf "$KUBE_BASE/etcd" "$KUBE_BASE/pki" "$KUBE_LOG_DIR" "$KUBE_KUBELET_DIR" "$KUBE_PID_DIR"
mkdir -p "$KUBE_BASE/pki" "$KUBE_LOG_DIR" "$KUBE_KUBELET_DIR" "$KUBE_PID_DIR"
chmod 700 "$KUBE_BASE/pki"

fail() {
  log "$1; last lines of $2:"
  tail -n 40 "$2" >&2 || true
  "$KUBE_HARNESS_DIR/down.sh" || true
  exit 1
}

# launch NAME CMD...: starts CMD in its own session (process group), logs to logs/NAME.log.
launch() {
  local name=$1
  shift
  setsid "$@" </dev/null >>"$KUBE_LOG_DIR/$name.log" 2>&1 &
  echo $! >"$KUBE_PID_DIR/$name.pid"
}

# wait_until NAME CHECK...: polls CHECK until it succeeds, failing when NAME exits or the time is up.
wait_until() {
  local name=$1
  shift
  local deadline=$(( $(date +%s) + KUBE_UP_TIMEOUT ))
  until "$@" >/dev/null 2>&1; do
    component_pid "$name" >/dev/null || fail "$name exited before it was ready" "$KUBE_LOG_DIR/$name.log"
    [ "$(date +%s)" -lt "$deadline" ] || fail "$name not ready after ${KUBE_UP_TIMEOUT}s" "$KUBE_LOG_DIR/$name.log"
    sleep 0.3
  done
}

# etcd: one member, no fsync (test data only).
ep=$(free_port); pp=$(free_port)
launch etcd "$BIN/etcd" --name=tide --data-dir="$KUBE_BASE/etcd" \
  --listen-client-urls="http://127.0.0.1:$ep" --advertise-client-urls="http://127.0.0.1:$ep" \
  --listen-peer-urls="http://127.0.0.1:$pp" --initial-advertise-peer-urls="http://127.0.0.1:$pp" \
  --initial-cluster="tide=http://127.0.0.1:$pp" --unsafe-no-fsync \
  --quota-backend-bytes=1073741824 --log-level=warn
wait_until etcd curl -sf -m 2 "http://127.0.0.1:$ep/health"
log "etcd up on 127.0.0.1:$ep ($(elapsed) s)"

# kube-apiserver: a bearer token for the admin (system:masters), RBAC, a self-signed serving
# certificate in pki/, one RSA key for service-account tokens. Admission without
# TaintNodesByCondition (only the node lifecycle controller, not run here, would take the
# not-ready taint off) and without ServiceAccount (pods need no token volume; the
# serviceaccount controller still makes each namespace's "default" account).
token=$(head -c 16 /dev/urandom | od -An -tx1 | tr -d ' \n')
echo "$token,tide-admin,uid-tide-admin,system:masters" >"$KUBE_BASE/pki/tokens.csv"
openssl genrsa -out "$KUBE_BASE/pki/sa.key" 2048 2>/dev/null
ap=$(free_port)
launch kube-apiserver "$BIN/kube-apiserver" \
  --etcd-servers="http://127.0.0.1:$ep" --etcd-prefix=/registry \
  --bind-address=127.0.0.1 --advertise-address=127.0.0.1 --secure-port="$ap" \
  --cert-dir="$KUBE_BASE/pki/apiserver" \
  --token-auth-file="$KUBE_BASE/pki/tokens.csv" --authorization-mode=RBAC \
  --service-account-issuer=https://kubernetes.default.svc.cluster.local \
  --service-account-key-file="$KUBE_BASE/pki/sa.key" --service-account-signing-key-file="$KUBE_BASE/pki/sa.key" \
  --service-cluster-ip-range=10.0.0.0/24 \
  --disable-admission-plugins=ServiceAccount,TaintNodesByCondition \
  --endpoint-reconciler-type=none --enable-priority-and-fairness=false \
  --allow-privileged=true --v=0
api="https://127.0.0.1:$ap"
wait_until kube-apiserver curl -skf -m 5 -H "Authorization: Bearer $token" "$api/readyz"
wait_until kube-apiserver curl -skf -m 5 -H "Authorization: Bearer $token" "$api/api/v1/namespaces/default"
log "kube-apiserver up at $api ($(elapsed) s)"

kubeconfig=$KUBE_BASE/kubeconfig
umask_old=$(umask); umask 077
cat >"$kubeconfig" <<KC
apiVersion: v1
kind: Config
clusters:
- name: tide
  cluster:
    server: $api
    insecure-skip-tls-verify: true
users:
- name: tide-admin
  user:
    token: $token
contexts:
- name: tide
  context:
    cluster: tide
    user: tide-admin
    namespace: default
current-context: tide
KC
umask "$umask_old"

launch kube-scheduler "$BIN/kube-scheduler" --kubeconfig="$kubeconfig" --leader-elect=false --secure-port=0 --v=1
launch kube-controller-manager "$BIN/kube-controller-manager" --kubeconfig="$kubeconfig" --leader-elect=false \
  --secure-port=0 --controllers=deployment,replicaset,garbagecollector,namespace,serviceaccount \
  --concurrent-gc-syncs=5 --v=1
launch kubelet "$KUBE_BASE/bin/tide-kubelet" --kubeconfig="$kubeconfig" --nodes="$KUBE_NODES" \
  --dir="$KUBE_KUBELET_DIR" --ready-file="$KUBE_BASE/kubelet.ready"
rm -f "$KUBE_BASE/kubelet.ready"
wait_until kubelet test -s "$KUBE_BASE/kubelet.ready"
for c in kube-scheduler kube-controller-manager; do
  component_pid "$c" >/dev/null || fail "$c exited" "$KUBE_LOG_DIR/$c.log"
done
log "scheduler, controller-manager and kubelet ($KUBE_NODES) up ($(elapsed) s)"

cat >"$KUBE_ENV.tmp" <<VARS
KUBECONFIG=$kubeconfig
TIDE_KUBE_NODES=$KUBE_NODES
TIDE_KUBE_KUBELET_DIR=$KUBE_KUBELET_DIR
TIDE_KUBE_BIN_DIR=$BIN
TIDE_KUBE_APISERVER=$api
TIDE_KUBE_TOKEN=$token
TIDE_KUBE_ETCD=http://127.0.0.1:$ep
TIDE_KUBE_LOG_DIR=$KUBE_LOG_DIR
TIDE_KUBE_VERSION=v1.37.2
TIDE_KUBE_ETCD_PID=$(cat "$KUBE_PID_DIR/etcd.pid")
TIDE_KUBE_APISERVER_PID=$(cat "$KUBE_PID_DIR/kube-apiserver.pid")
TIDE_KUBE_SCHEDULER_PID=$(cat "$KUBE_PID_DIR/kube-scheduler.pid")
TIDE_KUBE_CONTROLLER_MANAGER_PID=$(cat "$KUBE_PID_DIR/kube-controller-manager.pid")
TIDE_KUBE_KUBELET_PID=$(cat "$KUBE_PID_DIR/kubelet.pid")
VARS
mv "$KUBE_ENV.tmp" "$KUBE_ENV"
log "up in $(elapsed) s (env $KUBE_ENV, logs $KUBE_LOG_DIR)"
cat "$KUBE_ENV"
