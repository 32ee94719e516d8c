#!/usr/bin/env bash
# Instructions per intercepted call, counted by callgrind: repeatable on a noisy machine
# where wall-clock figures move by 20 %. Runs the call loop of bench_calls at two lengths
# without and with the shim (GPU timeline off) and prints the per-call slope of each, so
# start-up cost cancels out. All threads are counted: the writer thread's work per event is
# included in the shim's figure.
# Usage: bash bench/run_instructions.sh [BUILD_DIR]
set -euo pipefail
build=${1:-build}
command -v valgrind >/dev/null || { echo "needs valgrind" >&2; exit 1; }
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
instructions() { # iterations [preload]
  local preload=()
  [ -n "${2:-}" ] && preload=(LD_PRELOAD="$2" GPUWATCH_CUPTI=0 GPUWATCH_OUTPUT="$work/t")
  env "${preload[@]}" LD_LIBRARY_PATH="$build/tests/fakecuda" valgrind --tool=callgrind \
    --callgrind-out-file="$work/out" "$build/bench/bench_calls" --iterations "$1" --repeats 1 \
    >/dev/null 2>"$work/log"
  grep -o 'refs: *[0-9,]*' "$work/log" | tr -d ', ' | cut -d: -f2
}
short=2000 long=12000
calls=$(( (long - short) * 10 ))
b1=$(instructions $short); b2=$(instructions $long)
s1=$(instructions $short "$build/libintercept/libgpuwatch.so")
s2=$(instructions $long "$build/libintercept/libgpuwatch.so")
base=$(( (b2 - b1) / calls )); shim=$(( (s2 - s1) / calls ))
echo "without shim:  $base instructions/call"
echo "with shim:     $shim instructions/call (writer thread included)"
echo "shim adds:     $(( shim - base )) instructions/call ($(awk -v s=$shim -v b=$base 'BEGIN{printf "%.2f", s/b}')x)"
