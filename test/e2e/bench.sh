#!/usr/bin/env bash
# Runs tide's end-to-end benchmarks over real processes (make bench): scale-up and
# scale-down downtime next to the bare binary's start time, cold start (N TaskManagers started
# together to RUNNING at parallelism N, and how many deployments it took), and WordCount throughput.
set -euo pipefail
cd "$(dirname "$0")/../.."
exec go test ./test/e2e -run '^$' -bench "${BENCH:-.}" -benchtime "${BENCHTIME:-3x}" -timeout 30m "$@"
