# Shared settings for tide's Hadoop harness scripts (sourced, not run).
# Every path can be overridden from the environment:
#   HADOOP_ENV        env file written by the launcher once up (default <repo>/.cache/hadoop/env)
#   HADOOP_BASE       launcher work dir: dfs data, conf, logs, pid (default: the env file's dir)
#   TIDE_M2           Maven local repository (default <repo>/.cache/m2)
#   HADOOP_UP_TIMEOUT seconds to wait for the env file (default 240)
#   HADOOP_WITH_YARN  1 to also start a MiniYARNCluster with 2 NodeManagers
#   HADOOP_JAVA_OPTS  extra JVM flags
HARNESS_DIR=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
REPO_ROOT=$(cd "$HARNESS_DIR/../.." && pwd)
HADOOP_ENV=${HADOOP_ENV:-$REPO_ROOT/.cache/hadoop/env}
case $HADOOP_ENV in /*) ;; *) HADOOP_ENV=$REPO_ROOT/$HADOOP_ENV ;; esac
HADOOP_BASE=${HADOOP_BASE:-$(dirname "$HADOOP_ENV")}
TIDE_M2=${TIDE_M2:-$REPO_ROOT/.cache/m2}
HADOOP_UP_TIMEOUT=${HADOOP_UP_TIMEOUT:-240}
PID_FILE=$HADOOP_BASE/launcher.pid
LOG_FILE=$HADOOP_BASE/launcher.log
CLASSPATH_FILE=$HARNESS_DIR/target/classpath.txt
CLASSES_DIR=$HARNESS_DIR/target/classes

# JDK 17 flags Hadoop needs (Guice/cglib in the YARN web apps, UGI), plus a small, quick JVM.
JAVA_FLAGS=(
  --add-opens java.base/java.lang=ALL-UNNAMED --add-opens java.base/java.util=ALL-UNNAMED
  --add-opens java.base/java.lang.reflect=ALL-UNNAMED --add-opens java.base/java.io=ALL-UNNAMED
  --add-opens java.base/java.net=ALL-UNNAMED --add-opens java.base/java.nio=ALL-UNNAMED
  --add-opens java.base/sun.nio.ch=ALL-UNNAMED
  -Xmx1g -XX:+UseSerialGC -XX:TieredStopAtLevel=1 -Djava.net.preferIPv4Stack=true
)

log() { echo "hadoop: $*" >&2; }

# launcher_pid prints the pid of a live launcher, or fails.
launcher_pid() {
  [ -f "$PID_FILE" ] || return 1
  local pid
  pid=$(cat "$PID_FILE")
  [ -n "$pid" ] && kill -0 "$pid" 2>/dev/null && echo "$pid"
}

# env_value KEY prints KEY's value from the env file.
env_value() { sed -n "s/^$1=//p" "$HADOOP_ENV"; }

# control CMD... sends one line to the launcher's control port and prints the reply.
control() {
  local addr host port reply
  addr=$(env_value HADOOP_CONTROL)
  host=${addr%:*}; port=${addr##*:}
  exec 9<>"/dev/tcp/$host/$port" || return 1
  echo "$*" >&9
  read -r -t 120 reply <&9 || reply="error no reply"
  exec 9<&- 9>&-
  echo "$reply"
  [ "${reply%% *}" = ok ]
}
