#!/usr/bin/env bash
# Compares checkpoint-storage throughput in one run: Go → HDFS (colinmarc/hdfs through
# tide's storage package), Java → HDFS (Hadoop's own client, same bytes, same commit protocol,
# same block size: the namenode's), and Go → local disk; plus metadata-call latency, Go vs Java,
# and a cold JVM doing one list. "read" streams the file through a reused 1 MiB buffer on both
# sides (as a restore consumes it); "ReadFile" is Go's storage.ReadFile, the whole file in memory.
# Both sides verify checksums and read a file just written (warm datanode cache), after one
# untimed warm-up round.
#   BENCH_BYTES (default 64 MiB) per file, BENCH_ITERATIONS (default 5).
set -euo pipefail
. "$(dirname "$0")/lib.sh"

bytes=${BENCH_BYTES:-67108864}
iters=${BENCH_ITERATIONS:-5}
"$HARNESS_DIR/build.sh" # Bench.java may be newer than a running launcher's build
"$HARNESS_DIR/up.sh" >/dev/null
uri=$(env_value HDFS_URI)
cp="$CLASSES_DIR:$(cat "$CLASSPATH_FILE")"
# The benchmark JVM gets the full JIT (the launcher's flags trade it for start-up time).
bench_java=(java --add-opens java.base/java.lang=ALL-UNNAMED -Xmx1g -cp "$cp" org.tidestream.hadoop.Bench)

log "Go benchmarks ($bytes bytes x $iters)"
gobench() {
  (cd "$REPO_ROOT" && TIDE_HADOOP_ENV="$HADOOP_ENV" TIDE_BENCH_BYTES=$bytes TIDE_REQUIRE_HADOOP=1 \
    go test ./storage/ -run '^$' -bench "$1" -benchtime "$2" -count 1)
}
go_out="$(gobench 'BenchmarkWrite|BenchmarkRead' "${iters}x")
$(gobench 'BenchmarkMetadata' 200x)"
echo "$go_out" | grep '^Benchmark' >&2
# A failed Go benchmark leaves its column empty; say why.
echo "$go_out" | grep -A3 -e '--- FAIL' >&2 || true
mbps() { echo "$go_out" | awk -v b="^$1-[0-9]+$" '$1 ~ b { for (i = 1; i <= NF; i++) if ($(i+1) == "MB/s") print $i }'; }
usop() { echo "$go_out" | awk -v b="^$1-[0-9]+$" '$1 ~ b { for (i = 1; i <= NF; i++) if ($(i+1) == "ns/op") printf "%.0f\n", $i / 1000 }'; }

log "Java benchmark"
java_out=$("${bench_java[@]}" --uri "$uri/tide-bench-java-$$" --bytes "$bytes" --iterations "$iters" 2>/dev/null | grep '^java-hdfs')
echo "$java_out" >&2
jv() { echo "$java_out" | tr ' ' '\n' | sed -n "s/^$1=//p"; }

log "cold JVM: start + connect + one list (3 runs)"
cold_ms=()
for _ in 1 2 3; do
  t0=$(date +%s%N)
  "${bench_java[@]}" --uri "$uri/tide-bench-cold" --list-once >/dev/null 2>&1
  cold_ms+=($(( ($(date +%s%N) - t0) / 1000000 )))
done
cold_sorted=$(printf '%s\n' "${cold_ms[@]}" | sort -n | sed -n 2p)

ratio() { awk -v a="$1" -v b="$2" 'BEGIN { if (b > 0) printf "%.2f", a / b; else print "n/a" }'; }
gw=$(mbps BenchmarkWrite/hdfs); gr=$(mbps BenchmarkRead/hdfs); gf=$(mbps BenchmarkReadFile/hdfs)
lw=$(mbps BenchmarkWrite/file); lr=$(mbps BenchmarkRead/file); lf=$(mbps BenchmarkReadFile/file)
jw=$(jv write_mbps); jr=$(jv read_mbps)
gl=$(usop BenchmarkMetadata/hdfs/list); gc=$(usop BenchmarkMetadata/hdfs/create-empty-rename)
jl=$(jv list_us); jc=$(jv create_empty_rename_us)

printf '\n%-34s %12s %12s %12s\n' "throughput (MB/s, $((bytes >> 20)) MiB files)" write read ReadFile
printf '%-34s %12s %12s %12s\n' "Go   -> HDFS (tide storage)" "$gw" "$gr" "$gf"
printf '%-34s %12s %12s\n' "Java -> HDFS (Hadoop client)" "$jw" "$jr"
printf '%-34s %12s %12s %12s\n' "Go   -> local disk" "$lw" "$lr" "$lf"
printf '%-34s %12s %12s %12s\n' "ratio Go-HDFS / Java-HDFS" "$(ratio "$gw" "$jw")" "$(ratio "$gr" "$jr")" "$(ratio "$gf" "$jr")"
printf '%-34s %12s %12s %12s\n' "ratio Go-HDFS / local disk" "$(ratio "$gw" "$lw")" "$(ratio "$gr" "$lr")" "$(ratio "$gf" "$lf")"
printf '%-34s %12s\n' "HDFS block size (bytes, both)" "$(jv block_size)"
printf '\n%-34s %12s %22s\n' "metadata latency (µs)" list "create-empty+rename"
printf '%-34s %12s %22s\n' "Go   (warm client)" "$gl" "$gc"
printf '%-34s %12s %22s\n' "Java (warm client)" "$jl" "$jc"
printf '%-34s %12s\n' "Java cold JVM + one list (median)" "$((cold_sorted * 1000))"
printf '%-34s %12s\n' "ratio cold JVM / Go list" "$(ratio "$((cold_sorted * 1000))" "$gl")"
