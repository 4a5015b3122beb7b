#!/usr/bin/env bash
# YARN benchmark (make bench): submits CheckableCount with tide run --target yarn-per-job to
# the MiniYARNCluster and prints, from the same run, the time from `tide run` to RUNNING,
# the time from each TaskManager container's allocation to that TaskManager's registration
# (from the AM's log), and the AM heartbeat intervals in force.
# Needs the cluster with YARN: make hadoop-up HADOOP_YARN=1 (or TIDE_HADOOP_ENV=<env file>).
set -euo pipefail
cd "$(dirname "$0")/../.."
env_file=${TIDE_HADOOP_ENV:-.cache/hadoop/env}
[ -f "$env_file" ] || { echo "bench_yarn: no mini-cluster env file $env_file (make hadoop-up HADOOP_YARN=1)" >&2; exit 1; }
grep -q '^YARN_RM_ADDRESS=' "$env_file" || { echo "bench_yarn: the cluster in $env_file runs without YARN" >&2; exit 1; }
conf_dir=$(sed -n 's/^HADOOP_CONF_DIR=//p' "$env_file")
heartbeat=${YARN_HEARTBEAT:-1 s}
fast=${YARN_FAST_HEARTBEAT:-200 ms}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
go build -o "$work/tide" ./cmd/tide
HADOOP_CONF_DIR=$conf_dir "$work/tide" run --target yarn-per-job --job-classname CheckableCount \
  -Dexecution-mode=reactive -Dslotmanager.number-of-slots.max=2 -Dtide.yarn.node-id-format=host-port \
  "-Dyarn.heartbeat.interval=$heartbeat" "-Dyarn.heartbeat.container-request-interval=$fast" \
  "-Djobmanager.memory.process.size=256 mb" "-Dtaskmanager.memory.process.size=256 mb" \
  -- --records 20000 --keys 5 --rate 10000 --output "$work/out" 2>"$work/run.err" | tee "$work/run.out"
app=$(sed -n 's/^Submitted application \(application_[0-9_]*\).*/\1/p' "$work/run.out")
running=$(sed -n 's/^Job RUNNING \([^ ]*\) after tide run.*/\1/p' "$work/run.out")
am_log=$(find "$(dirname "$env_file")/target" -path "*/$app/*_000001/jobmanager.log" | head -n 1)
echo "---- YARN benchmark ($app)"
echo "AM heartbeat interval:              $heartbeat (while containers are pending: $fast)"
echo "tide run -> job RUNNING:            ${running:-unknown}"
[ -n "$am_log" ] || { echo "AM log of $app not found" >&2; exit 1; }
# slog text lines: time=2026-11-30T10:16:49.294Z ... msg="container allocated" ... taskmanager=tm-1-1
awk '
  function ms(ts,   t, h) { sub(/^time=/, "", ts); split(substr(ts, 12, 12), t, ":"); return ((t[1] * 60 + t[2]) * 60 + t[3]) * 1000 }
  function field(name,   i) { for (i = 1; i <= NF; i++) if (index($i, name "=") == 1) return substr($i, length(name) + 2); return "" }
  /msg="container allocated"/ { alloc[field("taskmanager")] = ms($1) }
  /msg="TaskManager registered"/ { tm = field("taskmanager"); if (tm in alloc) { d = ms($1) - alloc[tm]; printf "container allocated -> %s registered: %d ms\n", tm, d; sum += d; n++ } }
  END { if (n) printf "container allocated -> TaskManager registered (mean of %d): %d ms\n", n, sum / n; else { print "no TaskManager registrations in the AM log"; exit 1 } }
' "$am_log"
