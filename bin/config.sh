#!/usr/bin/env bash
# Shared settings of tide's scripts, like Flink's bin/config.sh: where tide lives, where its
# configuration, logs and pid files go, and how the tide binary is found.

# TIDE_HOME: the folder above bin/, unless set.
if [ -z "${TIDE_HOME:-}" ]; then
  TIDE_HOME=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd -P)
fi
export TIDE_HOME

# Configuration: FLINK_CONF_DIR as in Flink, else conf/ beside bin/.
TIDE_CONF_DIR=${FLINK_CONF_DIR:-$TIDE_HOME/conf}
export FLINK_CONF_DIR=$TIDE_CONF_DIR

# Logs: env.log.dir from the environment (FLINK_LOG_DIR), else log/ beside bin/.
TIDE_LOG_DIR=${FLINK_LOG_DIR:-$TIDE_HOME/log}
# Pid files: FLINK_PID_DIR, else /tmp (Flink's env.pid.dir default).
TIDE_PID_DIR=${FLINK_PID_DIR:-/tmp}
TIDE_IDENT_STRING=${FLINK_IDENT_STRING:-${USER:-$(id -un)}}

# tide_binary prints the path of the tide binary, building it from source when this is a
# source checkout and the binary is missing or older than the sources.
tide_binary() {
  if [ -n "${TIDE_BIN:-}" ]; then
    echo "$TIDE_BIN"
    return
  fi
  local bin=$TIDE_HOME/build/tide
  if [ -f "$TIDE_HOME/go.mod" ]; then
    if [ ! -x "$bin" ] || [ -n "$(find "$TIDE_HOME" -name '*.go' -newer "$bin" -not -path '*/.cache/*' -print -quit)" ]; then
      echo "building $bin" >&2
      (cd "$TIDE_HOME" && go build -o "$bin" ./cmd/tide) >&2 || return 1
    fi
  fi
  if [ ! -x "$bin" ]; then
    echo "tide binary not found at $bin (set TIDE_BIN to use another one)" >&2
    return 1
  fi
  echo "$bin"
}
