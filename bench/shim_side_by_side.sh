#!/usr/bin/env bash
# The shim's cost per intercepted call, two builds side by side on this machine, in one run:
# the same bench_calls and simulated driver (BASE_BUILD's), only the shim changes. Each pass:
# no shim, A's shim, B's shim, alternating, host-only and with the timeline on through the
# CUPTI double that makes no record (the shim's own timeline cost: correlation ids, its
# hooks' timeline work). The cost is the pass's ns per call less the same round's no-shim
# pass; each figure is the median of ROUNDS rounds, each round the fastest of 5 passes.
# MODE: the bench's mix (8 launches, an async copy, a query), or launch / copy / query
# alone (default: launch and mix).
# Build an old commit beside this one with:
#   git worktree add /tmp/old COMMIT && cmake -S /tmp/old -B /tmp/old/build \
#     -DCMAKE_BUILD_TYPE=RelWithDebInfo && cmake --build /tmp/old/build --target gpuwatch_shim
# Usage: bash bench/shim_side_by_side.sh A_BUILD B_BUILD [ROUNDS] [MODE...]
set -euo pipefail
a=${1:?usage: shim_side_by_side.sh A_BUILD B_BUILD [ROUNDS] [MODE...]}
b=${2:?usage: shim_side_by_side.sh A_BUILD B_BUILD [ROUNDS] [MODE...]}
rounds=${3:-7}
shift $(($# < 3 ? $# : 3))
modes=("$@")
[ ${#modes[@]} -gt 0 ] || modes=(launch mix)
bench="$b/bench/bench_calls"
fake="$b/tests/fakecuda"
cupti="$b/tests/fakecupti/libcupti.so.13"
for f in "$bench" "$fake/libcuda.so.1" "$cupti" "$a/libintercept/libgpuwatch.so" \
         "$b/libintercept/libgpuwatch.so"; do
  [ -e "$f" ] || { echo "missing $f" >&2; exit 1; }
done
traces=$(mktemp -d)
trap 'rm -rf "$traces"' EXIT

pass() {  # pass SHIM|none TIMELINE(host|null) MODE: ns per call
  local only=()
  [ "$3" != mix ] && only=(--only "$3")
  rm -rf "${traces:?}/t"
  if [ "$1" == none ]; then
    LD_LIBRARY_PATH=$fake "$bench" "${only[@]}"
  elif [ "$2" == host ]; then
    GPUWATCH_CUPTI=0 GPUWATCH_OUTPUT=$traces/t LD_PRELOAD=$1 LD_LIBRARY_PATH=$fake \
      "$bench" "${only[@]}"
  else
    GPUWATCH_TIMELINE=full FAKECUPTI_NO_RECORDS=1 GPUWATCH_CUPTI=$cupti \
      GPUWATCH_OUTPUT=$traces/t LD_PRELOAD=$1 LD_LIBRARY_PATH=$fake "$bench" "${only[@]}"
  fi | awk '/ns_per_call/ {print $2}'
}
. "$(dirname "$0")/measure.sh"  # (median)

echo "shim cost per call, ns (median of $rounds rounds; each the pass less its round's no-shim pass)"
printf '%-8s %-9s %10s %10s %8s\n' mode timeline "A" "B" "B / A"
echo "A: $a   B: $b"
for mode in "${modes[@]}"; do
  for timeline in host null; do
    ca=() cb=()
    for ((r = 0; r < rounds; r++)); do
      base=$(pass none host "$mode")
      ta=$(pass "$a/libintercept/libgpuwatch.so" "$timeline" "$mode")
      tb=$(pass "$b/libintercept/libgpuwatch.so" "$timeline" "$mode")
      ca+=("$(awk -v t="$ta" -v b="$base" 'BEGIN {print t - b}')")
      cb+=("$(awk -v t="$tb" -v b="$base" 'BEGIN {print t - b}')")
    done
    awk -v m="$mode" -v t="$timeline" -v x="$(median "${ca[@]}")" -v y="$(median "${cb[@]}")" \
      'BEGIN { printf "%-8s %-9s %10.1f %10.1f %8.2f\n", m, (t == "host" ? "host-only" : "timeline"), x, y, (x > 0 ? y / x : 0) }'
  done
done
