#!/usr/bin/env bash
# make bench: tide's Go benchmarks and end-to-end timings. Every figure is printed next to
# what it is compared with, measured in the same run (a raw TCP copy for the data plane, the
# bare binary's start for rescale downtime, Hadoop's own Java client for HDFS, the 10k case
# for the 20k scheduling decision). Benchmarks never fail a build; they report.
set -euo pipefail
cd "$(dirname "$0")/.."
out=.cache/bench
mkdir -p "$out"
section() { printf '\n==> %s\n' "$*"; }

# ratio FILE A B: prints B's ns/op divided by A's (benchmark names without the -N suffix).
ratio() {
  awk -v a="$2" -v b="$3" '
    { name=$1; sub(/-[0-9]+$/, "", name) }
    name==a { ta=$3 } name==b { tb=$3 }
    END { if (ta && tb) printf "    %s / %s = %.2fx (linear scaling would be 2.00x)\n", b, a, tb/ta }' "$1"
}

section "core: one scheduling decision (10,000 and 20,000 subtasks on 10-slot TaskManagers), plan+deploy, Step"
go test -run '^$' -bench 'Decision|PlanAndDeploy|Step' -benchmem ./core/ ./core/allocator/ | tee "$out/core.txt"
ratio "$out/core.txt" BenchmarkDecision10k BenchmarkDecision20k
ratio "$out/core.txt" BenchmarkPlanAndDeploy10k BenchmarkPlanAndDeploy20k

section "data plane: 100-byte records over loopback TCP and in-process, against a raw TCP io.Copy of the same bytes"
go test -run '^$' -bench Throughput -benchtime 2000000x ./tm/netplane/ | tee "$out/netplane.txt"

section "operator chain: WordCount's per-record path without the network (tokenize -> encode+hash -> decode -> count -> file sink), decode -> ProcessKeyed, TumblingWindow or Reduce -> encode, and decode -> print sink; allocs/op and B/op are per word and do not depend on the machine's load"
go test -run '^$' -bench 'ChainWordCount|ChainKeyedOperators|PrintSink' -benchtime 1000000x -benchmem ./stream/ | tee "$out/chain.txt"

section "heap keyed state: a key's lookup (WordCount's 1000 words over 128 key groups) in the typed value state's key-group maps and in the Heap backend (list and map state, encoded keys, the value copied out), against one Go map of the same keys"
go test -run '^$' -bench KeyGroupMapGet -count 3 ./state/ | tee "$out/keygroup-map.txt"
awk '/^BenchmarkKeyGroupMapGet\// { n=$1; sub(/-[0-9]+$/, "", n); sub(/^BenchmarkKeyGroupMapGet\//, "", n); if (!(n in best) || $3 < best[n]) best[n]=$3 }
  END { a=best["one-go-map"]; if (!a) exit
    for (n in best) if (n != "one-go-map") printf "    %s / one Go map = %.2fx per lookup (best of 3 each)\n", n, best[n]/a }' "$out/keygroup-map.txt"

section "task executor: WordCount through a keyBy across two executors (in one process), task metrics on and off; allocs/op and B/op per word"
# Three runs of on-then-off, so that a change in the machine's load hits both alike.
: >"$out/exec.txt"
for _ in 1 2 3; do
  go test -run '^$' -bench WordCount -benchtime 1000000x -benchmem ./tm/exec/ | tee -a "$out/exec.txt"
done
# The cost of the per-record task metrics: words/s with them on against off (best of 3 each).
awk '/metrics=/ { split($1, n, "metrics="); on = (n[2] ~ /^true/); for (i = 1; i < NF; i++) if ($(i+1) == "words/s") v = $i
    if (on && v > best_on) best_on = v; if (!on && v > best_off) best_off = v }
  END { if (best_on && best_off) printf "    task metrics: %.0f words/s on, %.0f off: on/off = %.3f\n", best_on, best_off, best_on / best_off }' "$out/exec.txt"

section "latency: p50/p99 of records stamped at a 10k records/s source and compared at the sink (keyBy, two executors on loopback), execution.buffer-timeout 0, 5 ms and 100 ms"
go test -run '^$' -bench Latency -benchtime 1x ./tm/exec/ | tee "$out/latency.txt"

section "end to end over real processes: rescale downtime and cold start of N=2/8 TaskManagers (next to the bare binary's start), WordCount at p=1 and p=2 (next to a hand-written single-goroutine loop on the same input), and at p=2 with the default execution.buffer-timeout next to the build before issue 17's latency work (758deb6^), alternating in one run"
# The build before the latency work, built once into .cache/bench (skipped without the history).
before="$PWD/$out/tide-before-latency"
if [ ! -x "$before" ] && git cat-file -e '758deb6^{commit}' 2>/dev/null; then
  src=$(mktemp -d)
  git archive '758deb6^' | tar -x -C "$src" && (cd "$src" && go build -o "$before" ./cmd/tide) || echo "    could not build 758deb6^: WordCount now/before skipped"
  rm -rf "$src"
fi
if [ -x "$before" ]; then export TIDE_BENCH_BEFORE_BIN="$before"; fi
test/e2e/bench.sh | tee "$out/e2e.txt"

section "records/s of a keyed job (numbers -> keyBy -> a 1000-byte value per key updated by every record; one TaskManager, 512 MiB managed memory, file://) while checkpoints are in flight against between them, in one run: heap (copy-on-write, and encoded at the barrier as the baseline), pebble full and pebble incremental (uploads at low priority, and at normal priority as the baseline) at 64 MiB, then pebble incremental and heap (copy-on-write) at 1 GiB; the longest time without a record and the barrier's synchronous part; each size ends with every backend's during/between side by side and the load average"
# TIDE_BENCH_CKPT_MIB sets the size; by hand, every mode at 1 GiB (heap-sync only up to 256 MiB):
#   TIDE_BENCH_CKPT_MIB=1024 go test -run '^$' -bench CheckpointThroughput -benchtime 1x -timeout 90m ./tm/exec/
go test -run '^$' -bench CheckpointThroughput -benchtime 1x -timeout 60m ./tm/exec/ | tee "$out/ckpt-throughput.txt"
TIDE_BENCH_CKPT_MIB=1024 go test -run '^$' -bench 'CheckpointThroughput/.*/(pebble-incremental|heap)$' -benchtime 1x -timeout 90m ./tm/exec/ | tee -a "$out/ckpt-throughput.txt"

section "Kubernetes: tide run --target kubernetes-application -> RUNNING, TaskManager pod created -> registered, a pod's process killed -> RUNNING again, next to the bare binary's start (make k8s-up's control plane)"
if make --no-print-directory k8s-up >/dev/null 2>&1; then
  TIDE_KUBE_BENCH=1 TIDE_REQUIRE_KUBE=1 go test ./test/e2e -run '^$' -bench '^BenchmarkKube$' -benchtime 1x -timeout 20m | tee "$out/kube.txt"
else
  echo "    skipped: make k8s-up did not start the Kubernetes harness"
fi

if command -v java >/dev/null && command -v mvn >/dev/null; then
  section "HDFS: checkpoint-sized writes and reads, Go client vs Hadoop's Java client vs local disk"
  make --no-print-directory hadoop-up HADOOP_YARN=1 >/dev/null
  test/hadoop/bench.sh | tee "$out/hdfs.txt"
  section "HDFS uploads of 30 MB and 300 MB: tide's block sessions and two-block sessions, each next to one session for the whole file (the upload before block sessions), alternating in one run"
  TIDE_REQUIRE_HADOOP=1 go test -run '^$' -bench BenchmarkUploadSessions -benchtime 3x ./storage/ | tee "$out/upload.txt"
  awk '/^BenchmarkUploadSessions\// { name=$1; sub(/-[0-9]+$/, "", name); sub(/^BenchmarkUploadSessions\//, "", name)
      for (i = 1; i < NF; i++) v[$(i+1)] = $i
      printf "    %s: tide'"'"'s sessions / one session = %.2fx time, two-block sessions / one session = %.2fx; failed sessions resumed per upload: single %s, tide %s, two-block %s\n",
        name, v["tide/single"], v["two-block/single"], v["single-resumed/op"], v["tide-resumed/op"], v["two-block-resumed/op"] }' "$out/upload.txt"
  if [ -x test/e2e/bench_hdfs.sh ]; then
    section "checkpoint duration of CheckableCount: file:// vs hdfs://"
    test/e2e/bench_hdfs.sh | tee "$out/checkpoint.txt"
  fi
  section "keyed state of one subtask, 100 MiB and 1 GiB on pebble: checkpoint time and bytes (full, incremental, incremental after 1% of keys changed), restores from HDFS and from local files and of half the key groups, state updates/s during an upload against steady, RSS; next to the heap backend and a plain copy of the same bytes; file:// and hdfs://"
  TIDE_BENCH_STATE_1G=1 TIDE_HADOOP_ENV="$PWD/.cache/hadoop/env" go test -run '^$' -bench StateBackends -benchtime 1x -timeout 90m ./tm/exec/ | tee "$out/state.txt"
  section "warm-up and standby (issue 14), checkpoints on HDFS: switch downtime (last record before -> every subtask's first record after) of a scale-up and an evacuation with warm-up vs without, and of a TaskManager SIGKILL with a standby vs restoring from HDFS, at 1 MiB, 100 MiB and 1 GiB of keyed state, ratios from the same run"
  TIDE_BENCH_WARMUP=1 TIDE_BENCH_WARMUP_1G=1 TIDE_BENCH_WARMUP_STORAGE=hdfs TIDE_REQUIRE_HADOOP=1 TIDE_HADOOP_ENV="$PWD/.cache/hadoop/env" \
    go test ./test/e2e -run '^$' -bench '^BenchmarkWarmupDowntime$' -benchtime 1x -timeout 120m | tee "$out/warmup.txt"
  section "YARN: tide run to RUNNING, container allocation to TaskManager registered, next to the AM heartbeat"
  test/e2e/bench_yarn.sh | tee "$out/yarn.txt"
  section "Kafka: KafkaCount (Kafka -> keyBy -> Kafka, p=2) exactly-once and at-least-once, next to the broker's own producer/consumer on the same topic"
  make --no-print-directory kafka-up >/dev/null
  TIDE_REQUIRE_KAFKA=1 go test -run '^$' -bench KafkaCount -benchtime 1x ./test/kafka/e2e/ | tee "$out/kafka.txt"
else
  section "HDFS and YARN benchmarks skipped: no Java/Maven on this machine"
  section "warm-up and standby (issue 14), checkpoints on file:// (no HDFS here): switch downtime with warm-up vs without and with a standby vs without, at 1 MiB, 100 MiB and 1 GiB of keyed state"
  TIDE_BENCH_WARMUP=1 TIDE_BENCH_WARMUP_1G=1 go test ./test/e2e -run '^$' -bench '^BenchmarkWarmupDowntime$' -benchtime 1x -timeout 120m | tee "$out/warmup.txt"
  section "keyed state of one subtask, 100 MiB and 1 GiB on pebble (file:// only): full vs incremental checkpoints, restores, updates/s during an upload, next to the heap backend and a plain copy"
  TIDE_BENCH_STATE_1G=1 go test -run '^$' -bench StateBackends -benchtime 1x -timeout 90m ./tm/exec/ | tee "$out/state.txt"
fi
printf '\nall figures are also in %s/\n' "$out"
