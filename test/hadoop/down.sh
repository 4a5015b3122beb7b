#!/usr/bin/env bash
# Stops the mini-cluster with SIGTERM (the launcher removes its env file and shuts HDFS/YARN down),
# waits for it, falls back to SIGKILL after HADOOP_DOWN_TIMEOUT seconds, and cleans the work dir.
set -euo pipefail
. "$(dirname "$0")/lib.sh"

if pid=$(launcher_pid); then
  "$(dirname "$0")/../stop-pids.sh" hadoop "${HADOOP_DOWN_TIMEOUT:-60}" "$pid"
else
  log "not running"
fi
rm -f "$PID_FILE" "$HADOOP_ENV" "$HADOOP_ENV.tmp"
rm -rf "$HADOOP_BASE/dfs" "$HADOOP_BASE/conf" "$HADOOP_BASE/target"
