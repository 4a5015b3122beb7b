#!/usr/bin/env bash
# Starts the HDFS mini-cluster (and YARN with HADOOP_WITH_YARN=1 or --yarn) in the background,
# waits until the env file appears and prints the addresses. Idempotent: when a launcher is
# already up and answers on its control port, it only prints the addresses.
set -euo pipefail
. "$(dirname "$0")/lib.sh"

with_yarn=${HADOOP_WITH_YARN:-0}
for arg in "$@"; do
  case $arg in
    --yarn) with_yarn=1 ;;
    *) log "unknown argument $arg (usage: up.sh [--yarn])"; exit 2 ;;
  esac
done

if pid=$(launcher_pid) && [ -f "$HADOOP_ENV" ] && control ping >/dev/null 2>&1; then
  if [ "$with_yarn" = 1 ] && [ -z "$(env_value YARN_RM_ADDRESS)" ]; then
    log "running (pid $pid) without YARN; run down.sh first to restart it with YARN"
    exit 1
  fi
  log "already up (pid $pid)"
  cat "$HADOOP_ENV"
  exit 0
fi
if pid=$(launcher_pid); then
  log "stale launcher (pid $pid) without a working env file; stopping it"
  "$HARNESS_DIR/down.sh"
fi

start=$(date +%s.%N)
"$HARNESS_DIR/build.sh"

rm -rf "$HADOOP_BASE/dfs" "$HADOOP_BASE/conf" "$HADOOP_BASE/target"
mkdir -p "$HADOOP_BASE"
rm -f "$HADOOP_ENV"
args=(--base "$HADOOP_BASE" --env "$HADOOP_ENV")
[ "$with_yarn" = 1 ] && args+=(--yarn)
# MiniYARNCluster puts its work dir under ./target, so run from the base dir.
# shellcheck disable=SC2086
(cd "$HADOOP_BASE" && exec setsid java "${JAVA_FLAGS[@]}" ${HADOOP_JAVA_OPTS:-} \
  -cp "$CLASSES_DIR:$(cat "$CLASSPATH_FILE")" org.tidestream.hadoop.Launcher "${args[@]}" \
  </dev/null >"$LOG_FILE" 2>&1) &
echo $! >"$PID_FILE"
pid=$!

deadline=$(( $(date +%s) + HADOOP_UP_TIMEOUT ))
while [ ! -f "$HADOOP_ENV" ]; do
  if ! kill -0 "$pid" 2>/dev/null; then
    log "launcher exited before it was ready; last lines of $LOG_FILE:"
    tail -n 40 "$LOG_FILE" >&2
    rm -f "$PID_FILE"
    exit 1
  fi
  if [ "$(date +%s)" -ge "$deadline" ]; then
    log "not ready after ${HADOOP_UP_TIMEOUT}s; last lines of $LOG_FILE:"
    tail -n 40 "$LOG_FILE" >&2
    "$HARNESS_DIR/down.sh" || true
    exit 1
  fi
  sleep 0.2
done
log "up in $(awk -v a="$start" -v b="$(date +%s.%N)" 'BEGIN{printf "%.1f", b-a}') s (pid $pid, log $LOG_FILE)"
cat "$HADOOP_ENV"
