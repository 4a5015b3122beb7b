#!/usr/bin/env bash
# Starts and stops tide daemons in the background, like Flink's flink-daemon.sh:
#   tide-daemon.sh (start|stop|stop-all) (standalonejob|taskexecutor) [args]
# Several daemons of one kind may run on one machine; their pids are kept one per line in
# $TIDE_PID_DIR/tide-$USER-$DAEMON.pid, their logs in $TIDE_LOG_DIR.
set -euo pipefail
. "$(dirname "${BASH_SOURCE[0]}")/config.sh"

usage="Usage: tide-daemon.sh (start|stop|stop-all) (standalonejob|taskexecutor) [args]"
if [ $# -lt 2 ]; then
  echo "$usage" >&2
  exit 1
fi
startstop=$1
daemon=$2
shift 2

case $daemon in
  standalonejob) command=jobmanager ;;
  taskexecutor) command=taskmanager ;;
  *)
    echo "Unknown daemon '$daemon'. $usage" >&2
    exit 1
    ;;
esac

pid_file=$TIDE_PID_DIR/tide-$TIDE_IDENT_STRING-$daemon.pid
mkdir -p "$TIDE_PID_DIR" "$TIDE_LOG_DIR"

alive() { kill -0 "$1" 2>/dev/null; }

# Drop pids of processes that are gone, so a killed daemon does not block a new start.
prune_pid_file() {
  [ -f "$pid_file" ] || return 0
  local tmp
  tmp=$(mktemp)
  while read -r pid; do
    [ -n "$pid" ] && alive "$pid" && echo "$pid"
  done <"$pid_file" >"$tmp" || true
  if [ -s "$tmp" ]; then
    mv "$tmp" "$pid_file"
  else
    rm -f "$tmp" "$pid_file"
  fi
}

# Earlier runs' logs kept per daemon log file, like Flink's MAX_LOG_FILE_NUMBER (default 10).
max_logs=${MAX_LOG_FILE_NUMBER:-10}
case $max_logs in
  '' | *[!0-9]*)
    echo "MAX_LOG_FILE_NUMBER=$max_logs: expected a whole number of earlier logs to keep (default 10)" >&2
    exit 1
    ;;
esac

# rotate_log moves log to log.1, log.1 to log.2 and so on, dropping the one past max_logs,
# so that a daemon started again logs to a fresh file and its last run's log stays beside.
rotate_log() {
  local log=$1 n
  [ -f "$log" ] || return 0
  if [ "$max_logs" -lt 1 ]; then
    rm -f "$log"
    return 0
  fi
  rm -f "$log.$max_logs"
  for ((n = max_logs - 1; n >= 1; n--)); do
    if [ -f "$log.$n" ]; then mv "$log.$n" "$log.$((n + 1))"; fi
  done
  mv "$log" "$log.1"
}

stop_pid() {
  local pid=$1
  if alive "$pid"; then
    echo "Stopping $daemon daemon (pid: $pid) on host $(hostname)."
    kill "$pid"
    for _ in $(seq 1 100); do
      alive "$pid" || return 0
      sleep 0.1
    done
    echo "$daemon (pid: $pid) did not stop within 10 s; killing it." >&2
    kill -9 "$pid" 2>/dev/null || true
  else
    echo "No $daemon daemon (pid: $pid) is running anymore on $(hostname)."
  fi
}

case $startstop in
  start)
    prune_pid_file
    if [ "$daemon" = standalonejob ] && [ -s "$pid_file" ]; then
      echo "A standalonejob daemon is already running (pid: $(head -n1 "$pid_file")); stop it first." >&2
      exit 1
    fi
    id=0
    [ -f "$pid_file" ] && id=$(wc -l <"$pid_file" | tr -d ' ')
    log=$TIDE_LOG_DIR/tide-$TIDE_IDENT_STRING-$daemon-$id-$(hostname).log
    bin=$(tide_binary)
    echo "Starting $daemon daemon on host $(hostname)."
    rotate_log "$log"
    nohup "$bin" "$command" --configDir "$TIDE_CONF_DIR" "$@" >>"$log" 2>&1 </dev/null &
    pid=$!
    echo "$pid" >>"$pid_file"
    sleep 0.3
    if ! alive "$pid"; then
      echo "$daemon daemon (pid: $pid) exited at start; the end of its log ($log):" >&2
      tail -n 20 "$log" >&2
      prune_pid_file
      exit 1
    fi
    echo "$daemon daemon started (pid: $pid); log: $log"
    ;;
  stop)
    prune_pid_file
    if [ ! -s "$pid_file" ]; then
      echo "No $daemon daemon to stop on host $(hostname)."
      exit 0
    fi
    # Like Flink: stop the most recently started one.
    pid=$(tail -n 1 "$pid_file")
    stop_pid "$pid"
    sed -i '$d' "$pid_file"
    [ -s "$pid_file" ] || rm -f "$pid_file"
    ;;
  stop-all)
    prune_pid_file
    if [ ! -s "$pid_file" ]; then
      echo "No $daemon daemon to stop on host $(hostname)."
      exit 0
    fi
    while read -r pid; do stop_pid "$pid"; done <"$pid_file"
    rm -f "$pid_file"
    ;;
  *)
    echo "Unknown action '$startstop'. $usage" >&2
    exit 1
    ;;
esac
