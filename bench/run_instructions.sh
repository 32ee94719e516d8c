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

# With the GPU timeline: a launch's instructions by library, through the CUPTI double that
# makes no record (FAKECUPTI_NO_RECORDS=1: the shim's own timeline work per call) and
# through the simulated CUPTI (records made, then handled by the shim: buffers, conversion,
# writing), so the shim's own cost stands apart from the simulated CUPTI's.
by_library() { # config iterations: "library instructions" lines
  local env_cfg=(GPUWATCH_CUPTI=0)
  case $1 in
    null) env_cfg=(FAKECUPTI_NO_RECORDS=1 GPUWATCH_CUPTI="$build/tests/fakecupti/libcupti.so.13") ;;
    full) env_cfg=(GPUWATCH_CUPTI="$build/tests/fakecupti/libcupti.so.13") ;;
  esac
  rm -rf "$work/t"
  env "${env_cfg[@]}" LD_PRELOAD="$build/libintercept/libgpuwatch.so" GPUWATCH_OUTPUT="$work/t" \
    LD_LIBRARY_PATH="$build/tests/fakecuda" valgrind --tool=callgrind \
    --callgrind-out-file="$work/lib.out" "$build/bench/bench_calls" --iterations "$2" \
    --repeats 1 --only launch >/dev/null 2>&1
  callgrind_annotate --threshold=100 "$work/lib.out" 2>/dev/null |
    awk '/^ *[0-9,]+ .*\[\/[^]]*\]$/ { n = $1; gsub(",", "", n); match($0, /\[\/[^]]*\]$/);
           lib = substr($0, RSTART + 1, RLENGTH - 2); sub(".*/", "", lib); sum[lib] += n }
         END { for (l in sum) print l, sum[l] }'
}
echo
echo "a launch's instructions by library (launch loop alone):"
printf '%-28s %10s %12s %12s\n' library host-only "timeline," "timeline,"
printf '%-28s %10s %12s %12s\n' "" "" "no records" "sim. CUPTI"
for cfg in host null full; do
  by_library $cfg $short >"$work/$cfg.short"
  by_library $cfg $long >"$work/$cfg.long"
done
# shellcheck disable=SC2016
awk -v calls=$(( (long - short) * 10 )) '
  { split(FILENAME, f, "/"); split(f[length(f)], p, "."); v[p[1], p[2], $1] = $2; libs[$1] = 1 }
  END {
    for (l in libs) {
      printf "%-28s", l
      for (i = 1; i <= 3; i++) {
        c = i == 1 ? "host" : i == 2 ? "null" : "full"
        printf " %12.1f", (v[c, "long", l] - v[c, "short", l]) / calls
      }
      printf "\n"
    }
  }' "$work"/{host,null,full}.{short,long} | sort -k4 -g -r |
  awk '$2 * $2 + $3 * $3 + $4 * $4 >= 0.25'  # (libraries with nothing per launch left out)
echo "(libgpuwatch.so: the shim; libcupti.so.13: the CUPTI double; libcuda.so.1: the simulated driver)"
