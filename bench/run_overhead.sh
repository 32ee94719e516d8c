#!/usr/bin/env bash
# Host overhead of the shim per intercepted call, on the simulated driver: the same call
# loop without and with libgpuwatch.so, interleaved, in one run. Prints the medians, the
# difference per call, and the trace's bytes per event.
# Usage: bash bench/run_overhead.sh [BUILD_DIR] [ROUNDS]
set -euo pipefail
build=${1:-build}
rounds=${2:-7}
bench="$build/bench/bench_calls"
shim="$build/libintercept/libgpuwatch.so"
fake="$build/tests/fakecuda"
for f in "$bench" "$shim" "$fake/libcuda.so.1"; do
  [ -e "$f" ] || { echo "missing $f: build first (cmake --build $build)" >&2; exit 1; }
done
traces=$(mktemp -d)
trap 'rm -rf "$traces"' EXIT
base=() shim_ns=()
for ((i = 0; i < rounds; i++)); do
  base+=("$(LD_LIBRARY_PATH=$fake "$bench" | awk '/ns_per_call/ {print $2}')")
  rm -rf "$traces"/*
  shim_ns+=("$(GPUWATCH_OUTPUT=$traces LD_PRELOAD=$shim LD_LIBRARY_PATH=$fake "$bench" \
               | awk '/ns_per_call/ {print $2}')")
done
median() { printf '%s\n' "$@" | sort -g | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}'; }
b=$(median "${base[@]}")
s=$(median "${shim_ns[@]}")
trace=$(ls "$traces"/*.gwt | head -1)
size=$(stat -c %s "$trace")
events=$("$build/tools/gpuwatch" stats --json "$trace" | grep -o '"events": *[0-9]*' | head -1 | grep -o '[0-9]*$')
echo "rounds:                 $rounds (median of each; each round = fastest of 5 passes)"
echo "without shim:           $b ns/call"
echo "with shim:              $s ns/call"
awk -v b="$b" -v s="$s" 'BEGIN { printf "shim overhead:          %.1f ns/call (%.2fx the simulated call)\n", s - b, s / b }'
awk -v n="$size" -v e="$events" 'BEGIN { printf "trace:                  %d bytes, %d events, %.2f bytes/event\n", n, e, n / e }'
