#!/usr/bin/env bash
# Cost of Python stacks (issue 19), on the simulated driver, in one run:
#  - ns per captured stack at Python depths 4, 16 and 64: synchronizing calls made holding
#    the GIL, each of which gets a stack, with GPUWATCH_PY_DEPTH=DEPTH against =0 (native
#    stacks off in both);
#  - the launch-heavy loop (ctypes.CDLL, GIL released around each call as PyTorch's
#    bindings do; one launch in 256 gets a stack) with stacks on against off, and without
#    the shim.
# Rounds are interleaved; each figure is the median over rounds of each run's best pass.
# Usage: bash bench/bench_pystacks.sh [BUILD_DIR] [ROUNDS] [PYTHON]
set -euo pipefail
build=${1:-build}
rounds=${2:-5}
python=${3:-python3}
here=$(cd "$(dirname "$0")" && pwd)
shim="$(cd "$build" && pwd)/libintercept/libgpuwatch.so"
fake="$(cd "$build" && pwd)/tests/fakecuda"
traces=$(mktemp -d)
trap 'rm -rf "$traces"' EXIT
run() {  # run PY_DEPTH ARGS...: ns per call under the shim (PY_DEPTH "none": no shim)
  local depth=$1
  shift
  rm -rf "$traces"/*
  if [ "$depth" = none ]; then
    LD_LIBRARY_PATH=$fake "$python" "$here/py_calls.py" "$@" | awk '{print $2}'
  else
    GPUWATCH_CUPTI=0 GPUWATCH_PY_DEPTH=$depth GPUWATCH_STACK_DEPTH=${native_depth:-12} \
      GPUWATCH_OUTPUT=$traces LD_PRELOAD=$shim \
      LD_LIBRARY_PATH=$fake "$python" "$here/py_calls.py" "$@" | awk '{print $2}'
  fi
}
. "$(dirname "$0")/measure.sh"  # (median)
declare -A ns
for ((i = 0; i < rounds; i++)); do
  for d in 4 16 64; do
    # (native stacks off: each synchronize would also unwind, on both sides)
    ns[stack_off_$d]+=" $(native_depth=0 run 0 --mode stack --depth $d --calls 20000)"
    ns[stack_on_$d]+=" $(native_depth=0 run $d --mode stack --depth $d --calls 20000)"
  done
  ns[launch_none]+=" $(run none --mode launch)"
  ns[launch_off]+=" $(run 0 --mode launch)"
  ns[launch_on]+=" $(run 16 --mode launch)"
done
echo "python: $("$python" -c 'import sys; print(sys.version.split()[0], sys.executable)'); rounds: $rounds"
for d in 4 16 64; do
  off=$(median ${ns[stack_off_$d]}) on=$(median ${ns[stack_on_$d]})
  echo "stack at depth $d: $(awk -v a="$on" -v b="$off" 'BEGIN {printf "%.0f ns per captured stack (call %.0f ns with, %.0f ns without)", a - b, a, b}')"
done
none=$(median ${ns[launch_none]}) off=$(median ${ns[launch_off]}) on=$(median ${ns[launch_on]})
echo "launch loop: $none ns/call without shim, $off with stacks off, $on with stacks on"
awk -v a="$on" -v b="$off" 'BEGIN {printf "stacks on vs off: %+.1f%% per launch (goal: at most +5%%)\n", 100 * (a - b) / b}'
