#!/usr/bin/env bash
# Host overhead of the shim per intercepted call, on the simulated driver, in one run: the
# same call loop (bench_calls: the launch-heavy mix, then each entry point of it alone)
#   - without the shim,
#   - with it, GPU timeline off (host-only),
#   - with the timeline on through a CUPTI double that makes no record
#     (FAKECUPTI_NO_RECORDS=1): the shim's own timeline cost per call (correlation push and
#     pop, its hooks' timeline work), with nothing to convert,
#   - with the timeline on through the simulated CUPTI, which makes a record per op: the
#     difference from the line above is the simulated CUPTI's work plus the shim's handling
#     of the records (buffers, conversion, writing),
#   - and, for the mix, the default sampled timeline past its record rate against the same
#     configurations, each the mean of 40 passes (windows of 100 ms every 1.5 s: the
#     default's 2 s every 30 s, scaled to the bench's 10 s or so), through the CUPTI double
#     that makes no record (the shim's own cost in the default mode; windows forced, as
#     the double gives no record rate to shut them by) and the simulated one.
# Rounds are interleaved; each figure is the median of the rounds (each round: the fastest
# of 5 passes). Also the trace's bytes per event, host-only and with the timeline. Real
# CUPTI's cost differs from the simulated one's and needs a GPU to measure.
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
modes=(mix launch copy query)
configs=(base host null full)
declare -A ns
run() {  # run CONFIG MODE: ns per call of one pass of bench_calls
  local only=()
  [ "$2" == mean ] && only=(--mean --repeats 40)
  [ "$2" != mix ] && [ "$2" != mean ] && only=(--only "$2")
  rm -rf "${traces:?}/$1"
  case $1 in
    base) LD_LIBRARY_PATH=$fake "$bench" "${only[@]}" ;;
    host) GPUWATCH_CUPTI=0 GPUWATCH_OUTPUT=$traces/host LD_PRELOAD=$shim \
            LD_LIBRARY_PATH=$fake "$bench" "${only[@]}" ;;
    null) GPUWATCH_TIMELINE=full FAKECUPTI_NO_RECORDS=1 GPUWATCH_CUPTI=$cupti \
            GPUWATCH_OUTPUT=$traces/null LD_PRELOAD=$shim LD_LIBRARY_PATH=$fake "$bench" "${only[@]}" ;;
    full) GPUWATCH_TIMELINE=full GPUWATCH_CUPTI=$cupti GPUWATCH_OUTPUT=$traces/full \
            LD_PRELOAD=$shim LD_LIBRARY_PATH=$fake "$bench" "${only[@]}" ;;
    sampled) GPUWATCH_TIMELINE=sampled GPUWATCH_TIMELINE_WINDOW_MS=100 \
            GPUWATCH_TIMELINE_EVERY_MS=1500 GPUWATCH_CUPTI=$cupti \
            GPUWATCH_OUTPUT=$traces/sampled LD_PRELOAD=$shim LD_LIBRARY_PATH=$fake \
            "$bench" "${only[@]}" ;;
    sampled_null) GPUWATCH_TIMELINE=sampled GPUWATCH_TIMELINE_WINDOW_MS=100 \
            GPUWATCH_TIMELINE_EVERY_MS=1500 GPUWATCH_TIMELINE_FULL_RATE=0 FAKECUPTI_NO_RECORDS=1 \
            GPUWATCH_CUPTI=$cupti \
            GPUWATCH_OUTPUT=$traces/sampled_null LD_PRELOAD=$shim LD_LIBRARY_PATH=$fake \
            "$bench" "${only[@]}" ;;
  esac | awk '/ns_per_call/ {print $2}'
}
. "$(dirname "$0")/measure.sh"  # (median)
bytes_per_event() {  # the mix's trace of CONFIG: bytes per event, host calls and GPU records
  local trace
  trace=$(ls "$traces/$1"/*.gwt | head -1)
  local size json events gpu
  size=$(stat -c %s "$trace")
  json=$("$build/tools/gpuwatch" stats --json "$trace")
  events=$(grep -o '"events": *[0-9]*' <<<"$json" | head -1 | grep -o '[0-9]*$')
  gpu=$(grep -o '"gpu_\(kernels\|memcpys\|memsets\)": *[0-9]*' <<<"$json" | head -3 |
        awk -F: '{s += $2} END {print s + 0}')
  awk -v n="$size" -v e="$events" -v g="$gpu" 'BEGIN {
    printf "%d bytes, %d host events + %d GPU records, %.2f B/event", n, e, g, n / (e + g) }'
}
for mode in "${modes[@]}"; do
  declare -A samples=()
  for ((i = 0; i < rounds; i++)); do
    for c in "${configs[@]}"; do
      samples[$c]+=" $(run "$c" "$mode")"
    done
  done
  for c in "${configs[@]}"; do
    # shellcheck disable=SC2086
    ns[$mode,$c]=$(median ${samples[$c]})
  done
  if [ "$mode" == mix ]; then
    host_size=$(bytes_per_event host)
    full_size=$(bytes_per_event full)
  fi
done
echo "rounds: $rounds (median of each; each round = fastest of 5 passes of 200000 calls)"
echo "ns per call            no shim  host-only  timeline,   timeline,     shim's own cost      simulated CUPTI"
echo "                                           no records  sim. CUPTI    host-only  timeline  + record handling"
for mode in "${modes[@]}"; do
  awk -v m="$mode" -v b="${ns[$mode,base]}" -v h="${ns[$mode,host]}" -v n="${ns[$mode,null]}" \
      -v f="${ns[$mode,full]}" 'BEGIN {
    label = m == "mix" ? "mix (8 launch,copy,query)" : m " alone";
    printf "%-22s %7.1f  %9.1f  %10.1f  %10.1f    %+8.1f  %+8.1f   %+8.1f\n", label, b, h, n, f, h - b, n - b, f - n }'
done
# the sampled timeline costs what it costs over time: means of many passes, all configs
declare -A mean=()
for ((i = 0; i < rounds; i++)); do
  for c in base host sampled_null sampled full; do
    mean[$c]+=" $(run "$c" mean)"
  done
done
# shellcheck disable=SC2086
awk -v b="$(median ${mean[base]})" -v h="$(median ${mean[host]})" -v f="$(median ${mean[full]})" \
    -v s="$(median ${mean[sampled]})" -v sn="$(median ${mean[sampled_null]})" 'BEGIN {
  print "mix, mean of 40 passes   no shim  host-only  sampled,    sampled,    full,        shim, own   shim + sim. CUPTI"
  print "                                             no records  sim. CUPTI  sim. CUPTI   sampled     sampled   full"
  printf "%-22s %9.1f  %9.1f  %10.1f  %10.1f  %10.1f    %+8.1f    %+8.1f  %+8.1f\n", "", b, h, sn, s, f, sn - b, s - b, f - b }'
windows=$("$build/tools/gpuwatch" dump "$traces"/sampled/*.gwt | grep -c ' gpu_window - - - open$' || true)
windows_null=$("$build/tools/gpuwatch" dump "$traces"/sampled_null/*.gwt | grep -c ' gpu_window - - - open$' || true)
echo "(the sampled runs' last passes opened $windows windows, $windows_null without records)"
echo "trace of the mix, host-only:     $host_size"
echo "trace of the mix, with timeline: $full_size"
