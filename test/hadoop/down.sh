#!/usr/bin/env bash
# Stops the mini-cluster with SIGTERM (the launcher removes its env file and shuts HDFS/YARN down),
# waits for it, falls back to SIGKILL after HADOOP_DOWN_TIMEOUT seconds, and cleans the work dir.
set -euo pipefail
. "$(dirname "$0")/lib.sh"

timeout=${HADOOP_DOWN_TIMEOUT:-60}
if pid=$(launcher_pid); then
  log "stopping launcher (pid $pid)"
  kill -TERM "$pid"
  for _ in $(seq $(( timeout * 5 ))); do
    kill -0 "$pid" 2>/dev/null || break
    sleep 0.2
  done
  if kill -0 "$pid" 2>/dev/null; then
    log "still running after ${timeout}s; sending SIGKILL"
    kill -KILL "$pid" 2>/dev/null || true
  fi
else
  log "not running"
fi
rm -f "$PID_FILE" "$HADOOP_ENV" "$HADOOP_ENV.tmp"
rm -rf "$HADOOP_BASE/dfs" "$HADOOP_BASE/conf" "$HADOOP_BASE/target"
