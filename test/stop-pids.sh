#!/usr/bin/env bash
# Stops processes a test harness started: SIGTERM to each pid, waits up to TIMEOUT seconds
# for all of them to exit, then SIGKILL to the ones still running. Pids already gone are
# fine. The harnesses' down.sh scripts call it (test/hadoop, test/kafka, test/kube).
#   test/stop-pids.sh [-g] NAME TIMEOUT PID...   (NAME prefixes the messages: "kafka")
# With -g each PID leads its own process group (started with setsid): the signals go to
# the whole group, and it counts as stopped once no process of the group is left. A PID
# that runs but leads no group is stopped alone (and said so).
set -euo pipefail

group=""
if [ "${1:-}" = -g ]; then
  group=-
  shift
fi
if [ $# -lt 2 ] || ! [[ $2 =~ ^[0-9]+$ ]]; then
  echo "usage: $0 [-g] NAME TIMEOUT-SECONDS PID..." >&2
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
# With -g, the PIDs to stop alone: they run but lead no process group.
declare -A alone=()
if [ -n "$group" ]; then
  for pid in "$@"; do
    pgid=$(ps -o pgid= -p "$pid" 2>/dev/null | tr -d ' ' || true)
    if [ -n "$pgid" ] && [ "$pgid" != "$pid" ]; then
      echo "$name: pid $pid leads no process group (its group is $pgid): stopping it alone" >&2
      alone[$pid]=1
    fi
  done
fi
# target PID is what kill gets: -PID for a process group.
target() {
  if [ -n "$group" ] && [ -z "${alone[$1]:-}" ]; then echo "-$1"; else echo "$1"; fi
}

# running PID: the process (for a group: a process of the group) exists and is not a
# zombie. A process whose parent is gone is a zombie until init reaps it, which can take
# seconds; kill -0 would count it.
running() {
  if [ -n "$group" ] && [ -z "${alone[$1]:-}" ]; then
    ps -e -o pgid= -o stat= | awk -v g="$1" '$1 == g && $2 !~ /^Z/ { found = 1 } END { exit !found }'
  else
    ps -o stat= -p "$1" 2>/dev/null | grep -qv '^Z'
  fi
}

alive() {
  local pid left=()
  for pid in "$@"; do
    if running "$pid"; then left+=("$pid"); fi
  done
  echo "${left[@]}"
}

for pid in "$@"; do
  what="pid"
  [ "$(target "$pid")" = "-$pid" ] && what="process group"
  echo "$name: stopping $what $pid" >&2
  kill -TERM -- "$(target "$pid")" 2>/dev/null || true
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
  for pid in $left; do
    kill -KILL -- "$(target "$pid")" 2>/dev/null || true
  done
fi
