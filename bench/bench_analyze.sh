#!/usr/bin/env bash
# gpuwatch analyze on a generated trace of EVENTS events (default 100 M): events per second
# on one core and peak memory (/usr/bin/time -v), for a host-only trace and one with CUPTI
# records; `gpuwatch stats` on the same file gives the reader's own speed for comparison, and
# `gpuwatch export` (Chrome JSON to /dev/null: the analysis on one thread while another
# writes the timeline, then the step spans and findings) its cost against analyze's (goal:
# within 2x, at most 256 MB): wall time, and CPU time (user + system) summed over threads.
#   bash bench/bench_analyze.sh [BUILD_DIR] [EVENTS]
set -euo pipefail
build=${1:-build}
events=${2:-100000000}
dir=$(mktemp -d "${TMPDIR:-/tmp}/bench_analyze.XXXXXX")
trap 'rm -rf "$dir"' EXIT
cmake --build "$build" --target gen_big_trace gpuwatch >/dev/null
. "$(dirname "$0")/measure.sh"
for mode in host gpu; do
    flag=""
    [ "$mode" == gpu ] && flag=--gpu
    n=$("$build/bench/gen_big_trace" "$dir/big.gwt" "$events" $flag | awk '{print $1}')
    bytes=$(stat -c %s "$dir/big.gwt")
    read -r rsecs rrss _ < <(measure "$build/tools/gpuwatch" stats "$dir/big.gwt")
    read -r asecs arss acpu < <(measure "$build/tools/gpuwatch" analyze --brief "$dir/big.gwt")
    read -r esecs erss ecpu < <(measure "$build/tools/gpuwatch" export -o /dev/null "$dir/big.gwt")
    awk -v m="$mode" -v n="$n" -v b="$bytes" -v rs="$rsecs" -v rr="$rrss" -v as="$asecs" -v ar="$arss" \
        -v es="$esecs" -v er="$erss" -v ac="$acpu" -v ec="$ecpu" 'BEGIN {
        printf "%-5s %d events, %.0f MB (%.1f B/event)\n", m, n, b / 1e6, b / n;
        printf "      reader alone (gpuwatch stats): %6.2f s  %6.1f M events/s  peak RSS %6.1f MB\n", rs, n / rs / 1e6, rr / 1024;
        printf "      gpuwatch analyze:              %6.2f s  %6.1f M events/s  peak RSS %6.1f MB\n", as, n / as / 1e6, ar / 1024;
        printf "      analysis cost beyond reading:  %.1f ns/event; analyze/read time ratio %.2f\n", (as - rs) * 1e9 / n, as / rs;
        printf "      gpuwatch export (chrome):      %6.2f s  %6.1f M events/s  peak RSS %6.1f MB; export/analyze time ratio %.2f\n", es, n / es / 1e6, er / 1024, es / as;
        printf "      CPU time: analyze %.2f s, export %.2f s (ratio %.2f: the export runs on two threads)\n", ac, ec, ec / ac;
    }'
    rm -f "$dir/big.gwt"
done
