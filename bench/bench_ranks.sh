#!/usr/bin/env bash
# gpuwatch analyze of a run directory of RANKS rank files (default 64; GPU records, an
# all-reduce each step, the last rank arriving last) holding EVENTS events in all (default
# 100 M), against one file of the same EVENTS in the same run: time per event (goal: linear
# in the total events, ratio ~1) and peak RSS (goal: bounded per file, so --jobs J files at
# once hold about J files' worth, whatever RANKS is).
#   bash bench/bench_ranks.sh [BUILD_DIR] [EVENTS] [RANKS]
set -euo pipefail
build=${1:-build}
events=${2:-100000000}
ranks=${3:-64}
dir=$(mktemp -d "${TMPDIR:-/tmp}/bench_ranks.XXXXXX")
trap 'rm -rf "$dir"' EXIT
cmake --build "$build" --target gen_big_trace gpuwatch >/dev/null
. "$(dirname "$0")/measure.sh"
mkdir "$dir/run"
for ((r = 0; r < ranks; r++)); do
    "$build/bench/gen_big_trace" "$dir/run/rank$r.gwt" $((events / ranks)) --gpu --comm \
        --rank $r --world "$ranks" >/dev/null
done
"$build/bench/gen_big_trace" "$dir/one.gwt" "$events" --gpu --comm --rank 0 --world 1 >/dev/null
read -r s1 m1 _ < <(measure "$build/tools/gpuwatch" analyze --brief --jobs 1 "$dir/one.gwt")
read -r sj1 mj1 _ < <(measure "$build/tools/gpuwatch" analyze --brief --jobs 1 "$dir/run")
read -r sj2 mj2 _ < <(measure "$build/tools/gpuwatch" analyze --brief --jobs 2 "$dir/run")
grep -m1 "straggler" "$dir/out" || echo "(no straggler line in the brief report)"
awk -v n="$events" -v k="$ranks" -v s1="$s1" -v m1="$m1" -v sj1="$sj1" -v mj1="$mj1" \
    -v sj2="$sj2" -v mj2="$mj2" 'BEGIN {
    printf "one file, %d events:         %6.2f s  %6.1f M events/s  peak RSS %7.1f MB\n", n, s1, n / s1 / 1e6, m1 / 1024;
    printf "%d rank files, --jobs 1:     %6.2f s  %6.1f M events/s  peak RSS %7.1f MB  time ratio to one file %.2f\n", k, sj1, n / sj1 / 1e6, mj1 / 1024, sj1 / s1;
    printf "%d rank files, --jobs 2:     %6.2f s  %6.1f M events/s  peak RSS %7.1f MB  time ratio to one file %.2f\n", k, sj2, n / sj2 / 1e6, mj2 / 1024, sj2 / s1;
}'
