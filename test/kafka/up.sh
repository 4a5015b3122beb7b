#!/usr/bin/env bash
# Starts one Apache Kafka broker (KRaft: broker and controller in one JVM) on two free loopback
# ports, with a fresh data dir, waits until it serves, and writes the env file the Go tests read
# ($KAFKA_ENV). Idempotent: when a broker from this harness already runs, prints its env file.
set -euo pipefail
. "$(dirname "$0")/lib.sh"

if pid=$(broker_pid) && [ -f "$KAFKA_ENV" ] && port_open 127.0.0.1 "$(env_value KAFKA_BROKER_PORT)"; then
  log "already up (pid $pid)"
  cat "$KAFKA_ENV"
  exit 0
fi
if broker_pid >/dev/null; then
  log "stale broker without a working env file; stopping it"
  "$KAFKA_HARNESS_DIR/down.sh"
fi

start=$(date +%s.%N)
"$KAFKA_HARNESS_DIR/build.sh"
cp_jars=$(cat "$KAFKA_CLASSPATH_FILE")
rm -f "$KAFKA_ENV"

# start_broker writes a config with fresh ports and data, formats and starts the broker; it
# fails when the broker exits before it serves (a port taken between pick and bind).
start_broker() {
  local bport cport sport cluster
  bport=$(free_port); cport=$(free_port); sport=$(free_port)
  [ "$bport" != "$cport" ] && [ "$sport" != "$bport" ] && [ "$sport" != "$cport" ] || return 1
  rm -rf "$KAFKA_BASE/data" "$KAFKA_BASE/conf"
  mkdir -p "$KAFKA_BASE/data" "$KAFKA_BASE/conf"
  cat >"$KAFKA_BASE/conf/server.properties" <<PROPS
process.roles=broker,controller
node.id=1
controller.quorum.voters=1@127.0.0.1:$cport
listeners=PLAINTEXT://127.0.0.1:$bport,SASL_PLAINTEXT://127.0.0.1:$sport,CONTROLLER://127.0.0.1:$cport
advertised.listeners=PLAINTEXT://127.0.0.1:$bport,SASL_PLAINTEXT://127.0.0.1:$sport
listener.security.protocol.map=PLAINTEXT:PLAINTEXT,SASL_PLAINTEXT:SASL_PLAINTEXT,CONTROLLER:PLAINTEXT
controller.listener.names=CONTROLLER
inter.broker.listener.name=PLAINTEXT
log.dirs=$KAFKA_BASE/data
num.partitions=1
auto.create.topics.enable=false
offsets.topic.replication.factor=1
offsets.topic.num.partitions=1
transaction.state.log.replication.factor=1
transaction.state.log.min.isr=1
transaction.state.log.num.partitions=1
share.coordinator.state.topic.replication.factor=1
share.coordinator.state.topic.min.isr=1
group.initial.rebalance.delay.ms=0
transaction.abort.timed.out.transaction.cleanup.interval.ms=1000
transaction.max.timeout.ms=900000
# Tests produce records with fixed timestamps from 2023 (known answers, timestamp starting
# offsets): the default 7-day time retention would delete them at its next check (every 5
# min), so a partition read a few seconds after its records were written could start past
# them. Test data is kept until the broker stops.
log.retention.ms=-1
# ACLs: PLAINTEXT clients (and the controller) are User:ANONYMOUS, a super user, so tests on
# the PLAINTEXT port see no authorization at all; the SASL/PLAIN port knows the user
# $KAFKA_SASL_USER, who may do only what a test grants with ACLs.
authorizer.class.name=org.apache.kafka.metadata.authorizer.StandardAuthorizer
super.users=User:ANONYMOUS
allow.everyone.if.no.acl.found=false
sasl.enabled.mechanisms=PLAIN
listener.name.sasl_plaintext.plain.sasl.jaas.config=org.apache.kafka.common.security.plain.PlainLoginModule required user_$KAFKA_SASL_USER="$KAFKA_SASL_PASSWORD";
PROPS
  # A Kafka cluster id is 16 random bytes in unpadded URL-safe base64 (what StorageTool
  # random-uuid prints), made here to save a JVM start.
  cluster=$(head -c 16 /dev/urandom | base64 | tr '+/' '-_' | tr -d '=')
  java "${KAFKA_JAVA_FLAGS[@]}" -cp "$cp_jars" kafka.tools.StorageTool format -t "$cluster" \
    -c "$KAFKA_BASE/conf/server.properties" >"$KAFKA_BASE/format.log" 2>&1 || {
      log "formatting failed:"; cat "$KAFKA_BASE/format.log" >&2; return 1; }
  : >"$KAFKA_LOG_FILE"
  # shellcheck disable=SC2086
  setsid java "${KAFKA_JAVA_FLAGS[@]}" ${KAFKA_JAVA_OPTS:-} \
    -Dlog4j2.configurationFile="file:$KAFKA_HARNESS_DIR/log4j2.properties" \
    -Dkafka.logs.file="$KAFKA_LOG_FILE" \
    -cp "$cp_jars" kafka.Kafka "$KAFKA_BASE/conf/server.properties" \
    </dev/null >>"$KAFKA_LOG_FILE" 2>&1 &
  local pid=$!
  echo "$pid" >"$KAFKA_PID_FILE"
  local deadline=$(( $(date +%s) + KAFKA_UP_TIMEOUT ))
  until grep -q "Kafka Server started" "$KAFKA_LOG_FILE" 2>/dev/null; do
    if ! kill -0 "$pid" 2>/dev/null; then
      log "broker exited before it was ready; last lines of $KAFKA_LOG_FILE:"
      tail -n 30 "$KAFKA_LOG_FILE" >&2
      rm -f "$KAFKA_PID_FILE"
      return 1
    fi
    if [ "$(date +%s)" -ge "$deadline" ]; then
      log "not ready after ${KAFKA_UP_TIMEOUT}s; last lines of $KAFKA_LOG_FILE:"
      tail -n 30 "$KAFKA_LOG_FILE" >&2
      "$KAFKA_HARNESS_DIR/down.sh" || true
      exit 1
    fi
    sleep 0.2
  done
  port_open 127.0.0.1 "$bport" || return 1
  cat >"$KAFKA_ENV.tmp" <<VARS
KAFKA_BOOTSTRAP=127.0.0.1:$bport
KAFKA_BROKER_PORT=$bport
KAFKA_SASL_BOOTSTRAP=127.0.0.1:$sport
KAFKA_SASL_USER=$KAFKA_SASL_USER
KAFKA_SASL_PASSWORD=$KAFKA_SASL_PASSWORD
KAFKA_CONTROLLER_PORT=$cport
KAFKA_PID=$pid
KAFKA_LOG=$KAFKA_LOG_FILE
KAFKA_CONFIG=$KAFKA_BASE/conf/server.properties
KAFKA_CLASSPATH_FILE=$KAFKA_CLASSPATH_FILE
KAFKA_VERSION=$(sed -n 's:.*<kafka.version>\(.*\)</kafka.version>.*:\1:p' "$KAFKA_HARNESS_DIR/pom.xml")
VARS
  mv "$KAFKA_ENV.tmp" "$KAFKA_ENV"
}

for try in 1 2 3; do
  if start_broker; then
    log "up in $(awk -v a="$start" -v b="$(date +%s.%N)" 'BEGIN{printf "%.1f", b-a}') s (pid $(cat "$KAFKA_PID_FILE"), log $KAFKA_LOG_FILE)"
    cat "$KAFKA_ENV"
    exit 0
  fi
  log "start attempt $try failed; retrying with new ports"
done
log "could not start the broker"
exit 1
