#!/usr/bin/env bash
# Starts and stops TaskManagers on this machine, like Flink's bin/taskmanager.sh:
#   taskmanager.sh (start|start-foreground) [-Dkey=value ...]
#   taskmanager.sh (stop|stop-all)
# Run `start` several times for several TaskManagers; `stop` stops the newest, `stop-all` all.
set -euo pipefail
. "$(dirname "${BASH_SOURCE[0]}")/config.sh"

usage="Usage: taskmanager.sh (start|start-foreground|stop|stop-all) [-Dkey=value ...]"
if [ $# -lt 1 ]; then
  echo "$usage" >&2
  exit 1
fi
action=$1
shift
case $action in
  start)
    exec "$(dirname "$0")/tide-daemon.sh" start taskexecutor "$@"
    ;;
  start-foreground)
    bin=$(tide_binary)
    exec "$bin" taskmanager --configDir "$TIDE_CONF_DIR" "$@"
    ;;
  stop|stop-all)
    exec "$(dirname "$0")/tide-daemon.sh" "$action" taskexecutor
    ;;
  *)
    echo "Unknown action '$action'." >&2
    echo "$usage" >&2
    exit 1
    ;;
esac
