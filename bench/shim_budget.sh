#!/usr/bin/env bash
# The shim's budget (docs/architecture.md), measured beside the same program untraced in
# the same run, for the three timelines (host-only, the default sampled, full):
#   - the shim's threads' CPU time per second of program (its writer, which also runs the
#     CPU sampler and takes CUPTI's buffers): SHIM_STATS' cpu_ns over the trace's span.
#     Goal: <= 0.5 % of one CPU on a launch-bound loop;
#   - extra resident memory: the traced run's peak RSS less the untraced run's.
#     Goal: <= ring size x threads + 4 MiB;
#   - the writer's lateness, from each round's deadline to its drain, from the first round:
#     p50 and p99 over the rounds. Goal: p99 <= 2 x the flush interval;
#   - and the program's own wall and CPU time, traced over untraced.
# The program: bench_calls' mix (8 launches, an async copy, a query) paced at one call per
# --pace-ns (default 4000: a launch-bound loop on a GPU, where cuLaunchKernel costs 3-5 us,
# the host busy in between), about 2 s; and once unpaced, the simulated driver's own speed,
# ~10 times a GPU's call rate (the worst case a record rate can be, not a budget line).
# Each figure is the median of ROUNDS runs, traced and untraced alternating.
# Usage: bash bench/shim_budget.sh [BUILD_DIR] [ROUNDS] [PACE_NS]
set -euo pipefail
build=${1:-build}
rounds=${2:-5}
pace=${3:-4000}
bench="$build/bench/bench_calls"
shim="$build/libintercept/libgpuwatch.so"
fake="$build/tests/fakecuda"
cupti="$build/tests/fakecupti/libcupti.so.13"
gpuwatch="$build/tools/gpuwatch"
for f in "$bench" "$shim" "$fake/libcuda.so.1" "$cupti" "$gpuwatch"; do
  [ -e "$f" ] || { echo "missing $f: build first (bash scripts/build.sh)" >&2; exit 1; }
done
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
ring_kb=${GPUWATCH_BUFFER_KB:-2048}

# (not measure.sh's measure: /usr/bin/time prints seconds to 10 ms, too coarse for ratios
# of 1.004 on a 2 s run; wait4's rusage gives microseconds)
# measured NAME=VALUE... -- CMD...: "MAXRSS_KB CPU_S WALL_S" of the command run with those
# variables set (in it alone: not in the python that measures it), from wait4's rusage
measured() {
  python3 -c '
import os, subprocess, sys, time
at = sys.argv.index("--")
env = dict(os.environ, **dict(kv.split("=", 1) for kv in sys.argv[1:at]))
t0 = time.monotonic()
p = subprocess.Popen(sys.argv[at + 1:], stdout=subprocess.DEVNULL, env=env)
_, status, ru = os.wait4(p.pid, 0)
wall = time.monotonic() - t0
if status:
    sys.exit("the program failed: status %d" % status)
print(ru.ru_maxrss, ru.ru_utime + ru.ru_stime, wall)' "$@"
}

# run MODE PACE OUT: one run; MODE untraced|host|sampled|full; prints "rss cpu wall"
run() {
  local mode=$1 pace_ns=$2 out=$3 env=()
  rm -rf "$out"
  case $mode in
    untraced) env=() ;;
    host) env=(GPUWATCH_CUPTI=0) ;;
    # (the default's windows, 2 s every 30 s past the record rate, scaled to the 2 s run)
    sampled) env=(GPUWATCH_CUPTI="$cupti" GPUWATCH_TIMELINE_WINDOW_MS=100
                  GPUWATCH_TIMELINE_EVERY_MS=1500) ;;
    full) env=(GPUWATCH_CUPTI="$cupti" GPUWATCH_TIMELINE=full) ;;
  esac
  local preload=()
  [ "$mode" != untraced ] && preload=(LD_PRELOAD="$shim" GPUWATCH_OUTPUT="$out")
  measured "${env[@]}" "${preload[@]}" LD_LIBRARY_PATH="$fake" -- \
    "$bench" --pace-ns "$pace_ns" -i "$iters" -r 1
}

. "$(dirname "$0")/measure.sh"  # (median)
field() { grep -o "\"$2\": [0-9.]*" <<<"$1" | head -1 | grep -o '[0-9.]*$'; }

line() {  # line LABEL PACE
  local label=$1 pace_ns=$2
  local -A rss=() cpu=() wall=() share=() p50=() p99=() late_max=() rings=()
  for ((r = 0; r < rounds; r++)); do
    for mode in untraced host sampled full; do
      read -r k c w < <(run "$mode" "$pace_ns" "$work/$mode")
      rss[$mode]+=" $k"; cpu[$mode]+=" $c"; wall[$mode]+=" $w"
      [ "$mode" == untraced ] && continue
      local trace json span
      trace=$(ls "$work/$mode"/*.gwt | head -1)
      json=$("$gpuwatch" stats --json "$trace")
      span=$(field "$json" wall_span_ns)
      share[$mode]+=" $(awk -v c="$(field "$json" cpu_ns)" -v s="$span" 'BEGIN {print 100 * c / s}')"
      p50[$mode]+=" $(field "$json" late_p50_ns)"
      p99[$mode]+=" $(field "$json" late_p99_ns)"
      late_max[$mode]+=" $(field "$json" late_max_ns)"
      rings[$mode]+=" $("$gpuwatch" dump "$trace" | grep -c ' def thread ')"
    done
  done
  echo "$label"
  printf '  %-9s %10s %12s %12s %9s %9s %9s %10s %10s\n' timeline "shim CPU" "extra RSS" \
    "RSS goal" "late p50" "late p99" "late max" "wall x" "CPU x"
  # shellcheck disable=SC2086
  local base_rss base_cpu base_wall
  base_rss=$(median ${rss[untraced]}); base_cpu=$(median ${cpu[untraced]})
  base_wall=$(median ${wall[untraced]})
  for mode in host sampled full; do
    # shellcheck disable=SC2086
    awk -v share="$(median ${share[$mode]})" -v rss="$(median ${rss[$mode]})" -v b="$base_rss" \
        -v threads="$(median ${rings[$mode]})" -v ring="$ring_kb" \
        -v p50="$(median ${p50[$mode]})" -v p99="$(median ${p99[$mode]})" \
        -v mx="$(median ${late_max[$mode]})" -v cpu="$(median ${cpu[$mode]})" -v bc="$base_cpu" \
        -v wall="$(median ${wall[$mode]})" -v bw="$base_wall" -v m="$mode" 'BEGIN {
      goal = ring * threads + 4096
      printf "  %-9s %8.3f %% %9.1f MiB %9.1f MiB %6.1f ms %6.1f ms %6.1f ms %9.3f %9.3f\n",
        m, share, (rss - b) / 1024, goal / 1024, p50 / 1e6, p99 / 1e6, mx / 1e6,
        wall / bw, cpu / bc }'
  done
}

echo "flush interval ${GPUWATCH_FLUSH_MS:-50} ms, ring ${ring_kb} KiB a thread; medians of $rounds runs each"
iters=$((2000000000 / (pace * 10)))
line "launch-bound loop, one call every $pace ns (~2 s): budget: shim CPU <= 0.5 %, extra RSS <= goal, late p99 <= $((2 * ${GPUWATCH_FLUSH_MS:-50})) ms" "$pace"
iters=200000
line "unpaced: the simulated driver's own speed, 2 M calls (a record rate no GPU gives)" 0
