#!/usr/bin/env bash
# Stops the broker started by up.sh: SIGTERM (a clean shutdown takes ~2 s), SIGKILL after
# KAFKA_DOWN_TIMEOUT seconds; removes the env file and the data dir.
set -euo pipefail
. "$(dirname "$0")/lib.sh"

timeout=${KAFKA_DOWN_TIMEOUT:-30}
if pid=$(broker_pid); then
  log "stopping broker (pid $pid)"
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
rm -f "$KAFKA_PID_FILE" "$KAFKA_ENV" "$KAFKA_ENV.tmp"
rm -rf "$KAFKA_BASE/data"
