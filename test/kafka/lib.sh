# Shared settings for tide's Kafka harness scripts (sourced, not run).
# Every path can be overridden from the environment:
#   KAFKA_ENV         env file written once the broker answers (default <repo>/.cache/kafka/env)
#   KAFKA_BASE        work dir: data, config, log, pid (default: the env file's dir)
#   TIDE_M2           Maven local repository (default <repo>/.cache/m2)
#   KAFKA_UP_TIMEOUT  seconds to wait for the broker (default 120)
#   KAFKA_JAVA_OPTS   extra JVM flags
KAFKA_HARNESS_DIR=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
REPO_ROOT=$(cd "$KAFKA_HARNESS_DIR/../.." && pwd)
KAFKA_ENV=${KAFKA_ENV:-$REPO_ROOT/.cache/kafka/env}
case $KAFKA_ENV in /*) ;; *) KAFKA_ENV=$REPO_ROOT/$KAFKA_ENV ;; esac
KAFKA_BASE=${KAFKA_BASE:-$(dirname "$KAFKA_ENV")}
TIDE_M2=${TIDE_M2:-$REPO_ROOT/.cache/m2}
KAFKA_UP_TIMEOUT=${KAFKA_UP_TIMEOUT:-120}
KAFKA_PID_FILE=$KAFKA_BASE/broker.pid
KAFKA_LOG_FILE=$KAFKA_BASE/broker.log
KAFKA_CLASSPATH_FILE=$KAFKA_BASE/classpath.txt
# The one user of the SASL/PLAIN listener (tests of authorization); loopback only.
KAFKA_SASL_USER=tide-test
KAFKA_SASL_PASSWORD=tide-test-secret

# A small, quick JVM: the broker needs ~350 MB resident with these settings.
KAFKA_JAVA_FLAGS=(-Xms128m -Xmx384m -XX:+UseSerialGC -XX:TieredStopAtLevel=1 -Djava.net.preferIPv4Stack=true)

log() { echo "kafka: $*" >&2; }

# broker_pid prints the pid of a live broker started by up.sh, or fails.
broker_pid() {
  [ -f "$KAFKA_PID_FILE" ] || return 1
  local pid
  pid=$(cat "$KAFKA_PID_FILE")
  [ -n "$pid" ] && kill -0 "$pid" 2>/dev/null && echo "$pid"
}

# env_value KEY prints KEY's value from the env file.
env_value() { sed -n "s/^$1=//p" "$KAFKA_ENV"; }

# port_open HOST PORT succeeds when something accepts connections there.
port_open() { (exec 9<>"/dev/tcp/$1/$2") 2>/dev/null; }

# free_port prints a loopback port that was free a moment ago, below the ephemeral range.
free_port() { python3 "$REPO_ROOT/test/free-port.py"; }
