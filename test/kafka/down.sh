#!/usr/bin/env bash
# Stops the broker started by up.sh: SIGTERM (a clean shutdown takes ~2 s), SIGKILL after
# KAFKA_DOWN_TIMEOUT seconds; removes the env file and the data dir.
set -euo pipefail
. "$(dirname "$0")/lib.sh"

if pid=$(broker_pid); then
  "$(dirname "$0")/../stop-pids.sh" kafka "${KAFKA_DOWN_TIMEOUT:-30}" "$pid"
else
  log "not running"
fi
rm -f "$KAFKA_PID_FILE" "$KAFKA_ENV" "$KAFKA_ENV.tmp"
rm -rf "$KAFKA_BASE/data"
