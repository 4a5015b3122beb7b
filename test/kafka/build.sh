#!/usr/bin/env bash
# Resolves the broker's jars from Maven Central (once; they stay in $TIDE_M2) and writes the
# runtime classpath to $KAFKA_BASE/classpath.txt. Does nothing when that is up to date.
set -euo pipefail
. "$(dirname "$0")/lib.sh"

up_to_date() {
  [ -f "$KAFKA_CLASSPATH_FILE" ] || return 1
  [ "$KAFKA_HARNESS_DIR/pom.xml" -nt "$KAFKA_CLASSPATH_FILE" ] && return 1
  local jar
  for jar in $(tr ':' ' ' < "$KAFKA_CLASSPATH_FILE"); do [ -f "$jar" ] || return 1; done
}

if up_to_date; then
  exit 0
fi
mkdir -p "$KAFKA_BASE"
log "resolving the broker's jars (maven repo $TIDE_M2)"
start=$(date +%s)
mvn -B -q -Dstyle.color=never -Dmaven.repo.local="$TIDE_M2" -f "$KAFKA_HARNESS_DIR/pom.xml" \
  dependency:build-classpath -Dmdep.outputFile="$KAFKA_CLASSPATH_FILE.tmp" -Dmdep.includeScope=runtime
mv "$KAFKA_CLASSPATH_FILE.tmp" "$KAFKA_CLASSPATH_FILE"
log "resolved in $(( $(date +%s) - start )) s"
