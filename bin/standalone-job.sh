#!/usr/bin/env bash
# Starts the AM of a per-job standalone cluster, like Flink's bin/standalone-job.sh:
#   standalone-job.sh (start|start-foreground) --job-classname NAME [--job-id ID] [--fromSavepoint PATH [--allowNonRestoredState]] [-Dkey=value ...] [job arguments]
#   standalone-job.sh stop
# Options tide does not know are the job's arguments ("--" ends the options explicitly).
# With execution-mode: reactive in conf/flink-conf.yaml the job uses every TaskManager that
# joins (bin/taskmanager.sh start) and scales down when one leaves.
set -euo pipefail
. "$(dirname "${BASH_SOURCE[0]}")/config.sh"

usage="Usage: standalone-job.sh (start|start-foreground) --job-classname NAME [--job-id ID] [--fromSavepoint PATH [--allowNonRestoredState]] [-Dkey=value ...] [job arguments]
       standalone-job.sh stop"
if [ $# -lt 1 ]; then
  echo "$usage" >&2
  exit 1
fi
action=$1
shift
case $action in
  start|start-foreground)
    # Split tide's options from the job's arguments.
    opts=()
    job_args=()
    has_job=0
    while [ $# -gt 0 ]; do
      case $1 in
        --job-classname|-j|--job-id|-D|--fromSavepoint|-s)
          if [ $# -lt 2 ]; then
            echo "standalone-job.sh $action: $1 needs a value." >&2
            echo "$usage" >&2
            exit 1
          fi
          case $1 in --job-classname|-j) has_job=1 ;; esac
          opts+=("$1" "$2")
          shift 2
          ;;
        --allowNonRestoredState|-n)
          opts+=(--allowNonRestoredState)
          shift
          ;;
        --job-classname=*|--job-id=*|--fromSavepoint=*|-D?*)
          case $1 in --job-classname=*) has_job=1 ;; esac
          opts+=("$1")
          shift
          ;;
        --)
          shift
          job_args+=("$@")
          break
          ;;
        *)
          job_args+=("$1")
          shift
          ;;
      esac
    done
    if [ $has_job = 0 ]; then
      echo "standalone-job.sh $action needs --job-classname NAME (the jobs this binary has: $(dirname "$0")/tide list-jobs)" >&2
      echo "$usage" >&2
      exit 1
    fi
    args=("${opts[@]}" -- "${job_args[@]+"${job_args[@]}"}")
    if [ "$action" = start-foreground ]; then
      bin=$(tide_binary)
      exec "$bin" jobmanager --configDir "$TIDE_CONF_DIR" "${args[@]}"
    fi
    exec "$(dirname "$0")/tide-daemon.sh" start standalonejob "${args[@]}"
    ;;
  stop)
    if [ $# -gt 0 ]; then
      echo "standalone-job.sh stop takes no arguments." >&2
      echo "$usage" >&2
      exit 1
    fi
    exec "$(dirname "$0")/tide-daemon.sh" stop-all standalonejob
    ;;
  *)
    echo "Unknown action '$action'." >&2
    echo "$usage" >&2
    exit 1
    ;;
esac
