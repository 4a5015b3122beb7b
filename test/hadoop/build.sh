#!/usr/bin/env bash
# Builds the launcher and writes its runtime classpath; does nothing when already up to date.
# Maven downloads go to $TIDE_M2 (<repo>/.cache/m2, ignored by git) so they happen once.
set -euo pipefail
. "$(dirname "$0")/lib.sh"

up_to_date() {
  [ -f "$CLASSPATH_FILE" ] || return 1
  [ -n "$(find "$HARNESS_DIR/pom.xml" "$HARNESS_DIR/src" -newer "$CLASSPATH_FILE" -print -quit)" ] && return 1
  # every jar on the classpath must still be in the cache
  local jar
  for jar in $(tr ':' ' ' < "$CLASSPATH_FILE"); do [ -f "$jar" ] || return 1; done
}

if up_to_date; then
  exit 0
fi
log "building launcher (maven repo $TIDE_M2)"
start=$(date +%s)
mvn -B -q -Dstyle.color=never -Dmaven.repo.local="$TIDE_M2" -f "$HARNESS_DIR/pom.xml" package
touch "$CLASSPATH_FILE"
log "built in $(( $(date +%s) - start )) s"
