#!/usr/bin/env bash
# Checkpoint duration of CheckableCount with file:// vs hdfs:// checkpoints, measured in
# the same run, printed with their ratio (make bench). Needs the mini-cluster
# (make hadoop-up); without it the benchmark is skipped and says so.
set -euo pipefail
cd "$(dirname "$0")/../.."
exec go test ./test/e2e -run '^$' -bench '^BenchmarkCheckpointDurationFileVsHDFS$' -benchtime "${BENCHTIME:-1x}" -timeout 20m -v "$@"
