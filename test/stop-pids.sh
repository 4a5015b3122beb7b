#!/usr/bin/env bash
# Stops processes a test harness started: SIGTERM to each pid, waits up to TIMEOUT seconds
# for all of them to exit, then SIGKILL to the ones still running. Pids already gone are
# fine. The harnesses' down.sh scripts call it (test/hadoop, test/kafka).
#   test/stop-pids.sh NAME TIMEOUT PID...   (NAME prefixes the messages: "kafka")
set -euo pipefail

if [ $# -lt 2 ] || ! [[ $2 =~ ^[0-9]+$ ]]; then
  echo "usage: $0 NAME TIMEOUT-SECONDS PID..." >&2
  exit 2
fi
name=$1 timeout=$2
shift 2
for pid in "$@"; do
  if ! [[ $pid =~ ^[1-9][0-9]*$ ]]; then
    echo "$name: $pid is not a process id" >&2
    exit 2
  fi
done

alive() {
  local pid left=()
  for pid in "$@"; do
    if kill -0 "$pid" 2>/dev/null; then left+=("$pid"); fi
  done
  echo "${left[@]}"
}

for pid in "$@"; do
  echo "$name: stopping pid $pid" >&2
  kill -TERM "$pid" 2>/dev/null || true
done
left=$(alive "$@")
for _ in $(seq $(( timeout * 5 ))); do
  [ -z "$left" ] && exit 0
  sleep 0.2
  # shellcheck disable=SC2086 # word splitting of the pid list is intended
  left=$(alive $left)
done
if [ -n "$left" ]; then
  echo "$name: still running after ${timeout}s: $left; sending SIGKILL" >&2
  # shellcheck disable=SC2086
  kill -KILL $left 2>/dev/null || true
fi
