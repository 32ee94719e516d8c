#!/usr/bin/env bash
# Host overhead of the shim per intercepted call, on the simulated driver: the same call
# loop without the shim, with it (GPU timeline off), and with the GPU timeline on through the
# simulated CUPTI, interleaved, in one run. Prints the medians, the differences per call, and
# the trace's bytes per event. Note: with the timeline on, the simulated CUPTI's own cost of
# producing records is included; real CUPTI's cost differs and needs a GPU to measure.
# Usage: bash bench/run_overhead.sh [BUILD_DIR] [ROUNDS]
set -euo pipefail
build=${1:-build}
rounds=${2:-7}
bench="$build/bench/bench_calls"
shim="$build/libintercept/libgpuwatch.so"
fake="$build/tests/fakecuda"
cupti="$build/tests/fakecupti/libcupti.so.13"
for f in "$bench" "$shim" "$fake/libcuda.so.1" "$cupti"; do
  [ -e "$f" ] || { echo "missing $f: build first (cmake --build $build)" >&2; exit 1; }
done
traces=$(mktemp -d)
trap 'rm -rf "$traces"' EXIT
base=() shim_ns=() timeline_ns=()
for ((i = 0; i < rounds; i++)); do
  base+=("$(LD_LIBRARY_PATH=$fake "$bench" | awk '/ns_per_call/ {print $2}')")
  rm -rf "$traces"/*
  timeline_ns+=("$(GPUWATCH_CUPTI=$cupti GPUWATCH_OUTPUT=$traces LD_PRELOAD=$shim \
                   LD_LIBRARY_PATH=$fake "$bench" | awk '/ns_per_call/ {print $2}')")
  rm -rf "$traces"/*
  shim_ns+=("$(GPUWATCH_CUPTI=0 GPUWATCH_OUTPUT=$traces LD_PRELOAD=$shim LD_LIBRARY_PATH=$fake \
               "$bench" | awk '/ns_per_call/ {print $2}')")
done
median() { printf '%s\n' "$@" | sort -g | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}'; }
b=$(median "${base[@]}")
s=$(median "${shim_ns[@]}")
trace=$(ls "$traces"/*.gwt | head -1)
size=$(stat -c %s "$trace")
events=$("$build/tools/gpuwatch" stats --json "$trace" | grep -o '"events": *[0-9]*' | head -1 | grep -o '[0-9]*$')
echo "rounds:                 $rounds (median of each; each round = fastest of 5 passes)"
echo "without shim:           $b ns/call"
t=$(median "${timeline_ns[@]}")
echo "with shim:              $s ns/call (GPU timeline off)"
echo "with shim + timeline:   $t ns/call (simulated CUPTI)"
awk -v b="$b" -v s="$s" 'BEGIN { printf "shim overhead:          %.1f ns/call (%.2fx the simulated call)\n", s - b, s / b }'
awk -v s="$s" -v t="$t" 'BEGIN { printf "timeline on vs off:     +%.1f ns/call (%.2fx)\n", t - s, t / s }'
awk -v n="$size" -v e="$events" 'BEGIN { printf "trace:                  %d bytes, %d events, %.2f bytes/event\n", n, e, n / e }'
