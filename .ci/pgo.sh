#!/usr/bin/env bash
# make pgo: regenerates cmd/tide/default.pgo, the CPU profile `go build ./cmd/tide` optimizes
# tide with (profile-guided optimization: hot calls inlined, hot interface calls
# devirtualized). It runs WordCount on 40M words twice on a local cluster (p=2 on one
# TaskManager of two slots, then on two one-slot TaskManagers, so that both the in-process
# and the TCP data paths are in it), takes a CPU profile of every TaskManager while the job
# runs, and merges them. Rerun it after changing the per-record path; commit the result.
set -euo pipefail
cd "$(dirname "$0")/.."
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
seconds=${PGO_SECONDS:-2}

echo "==> building tide"
go build -o "$work/tide" ./cmd/tide

echo "==> writing 40M words (4 files) to $work/in"
go run ./internal/testkit/cmd/wordcount-input -scale 20 "$work/in" # make bench's input, 20 times the size

profiles=()
for layout in "1 2" "2 1"; do
  read -r tms slots <<< "$layout"
  run="$work/run-$tms"
  echo "==> WordCount p=2 on $tms TaskManager(s) of $slots slot(s); CPU profiles of ${seconds}s"
  "$work/tide" run --target local --work-dir "$run" --job-classname WordCount --taskmanagers "$tms" \
    -D taskmanager.numberOfTaskSlots="$slots" -D taskmanager.debug.pprof.address=127.0.0.1:0 \
    -- --input "$work/in" --output "$work/out-$tms" > "$work/run-$tms.out" 2>&1 &
  pid=$!
  for _ in $(seq 1 300); do
    grep -q 'to=RUNNING' "$run/log/jobmanager.log" 2>/dev/null && break
    sleep 0.1
  done
  grep -q 'to=RUNNING' "$run/log/jobmanager.log" || { cat "$work/run-$tms.out"; echo "make pgo: the job did not start" >&2; exit 1; }
  sleep 0.5 # past deployment and the first records
  curls=()
  for i in $(seq 1 "$tms"); do
    addr=$(grep -o 'pprof endpoint serving.*address=[^ ]*' "$run/log/taskmanager-$i.log" | tail -1 | sed 's/.*address=//')
    [ -n "$addr" ] || { echo "make pgo: TaskManager $i logged no pprof address" >&2; exit 1; }
    curl -fsS -o "$work/tm-$tms-$i.pprof" "${addr}profile?seconds=$seconds" &
    curls+=($!)
    profiles+=("$work/tm-$tms-$i.pprof")
  done
  for c in "${curls[@]}"; do wait "$c"; done
  wait "$pid" || { cat "$work/run-$tms.out"; echo "make pgo: WordCount failed" >&2; exit 1; }
done

go tool pprof -proto "${profiles[@]}" > "$work/merged.pgo"
mv "$work/merged.pgo" cmd/tide/default.pgo
echo "==> wrote cmd/tide/default.pgo ($(wc -c < cmd/tide/default.pgo) bytes) from ${#profiles[@]} profiles"
