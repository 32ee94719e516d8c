#!/usr/bin/env bash
# The shim's own instructions per intercepted call, two or more builds side by side: the
# same bench_calls and simulated driver (the last build's), only libgpuwatch.so changes;
# callgrind counts libgpuwatch.so's instructions on all its threads (the writer's work per
# call included), as the slope between two loop lengths so that start-up cancels out.
# Unlike wall time (shim_side_by_side.sh) the count does not move with the machine's load
# (the simulated driver's own threads do, which is why only the shim's library is counted).
# Host-only and with the timeline through the CUPTI double that makes no record; the launch
# loop alone and bench_calls' mix (8 launches, an async copy, a query).
# Build an old commit beside this one as shim_side_by_side.sh says.
# Usage: bash bench/shim_instructions_side_by_side.sh BUILD... (the first is the baseline)
set -euo pipefail
[ $# -ge 1 ] || { echo "usage: shim_instructions_side_by_side.sh BUILD..." >&2; exit 2; }
command -v valgrind >/dev/null || { echo "needs valgrind" >&2; exit 1; }
builds=("$@")
base=${builds[$((${#builds[@]} - 1))]}
for b in "${builds[@]}"; do
  [ -e "$b/libintercept/libgpuwatch.so" ] || { echo "missing $b/libintercept/libgpuwatch.so" >&2; exit 1; }
done
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
short=2000 long=12000
per_call() {  # SHIM_BUILD host|timeline launch|mix: libgpuwatch.so's instructions per call
  local cfg=(GPUWATCH_CUPTI=0) only=() n=()
  [ "$2" == timeline ] && cfg=(FAKECUPTI_NO_RECORDS=1 GPUWATCH_CUPTI="$base/tests/fakecupti/libcupti.so.13")
  [ "$3" == launch ] && only=(--only launch)
  for iters in $short $long; do
    rm -rf "$work/t"
    env "${cfg[@]}" LD_PRELOAD="$1/libintercept/libgpuwatch.so" GPUWATCH_OUTPUT="$work/t" \
      LD_LIBRARY_PATH="$base/tests/fakecuda" valgrind --tool=callgrind \
      --callgrind-out-file="$work/out" "$base/bench/bench_calls" --iterations "$iters" \
      --repeats 1 "${only[@]}" >/dev/null 2>&1
    n+=("$(callgrind_annotate --threshold=100 "$work/out" 2>/dev/null |
      awk '/\[\/.*libgpuwatch\.so\]$/ { v = $1; gsub(",", "", v); s += v } END { print s + 0 }')")
  done
  awk -v a="${n[0]}" -v b="${n[1]}" -v c=$(( (long - short) * 10 )) 'BEGIN { printf "%.1f", (b - a) / c }'
}
printf '%-16s' "loop, timeline"
for b in "${builds[@]}"; do printf ' %23s' "$b"; done
echo
for loop in launch mix; do
  for tl in host timeline; do
    printf '%-16s' "$loop, $tl"
    first=""
    for b in "${builds[@]}"; do
      v=$(per_call "$b" "$tl" "$loop")
      [ -n "$first" ] || first=$v
      printf ' %14s (%5.3fx)' "$v" "$(awk -v v="$v" -v f="$first" 'BEGIN { print v / f }')"
    done
    echo
  done
done
