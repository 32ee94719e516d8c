#!/usr/bin/env bash
# Quick start: install what is missing, build, and trace the demo training loop; end with the
# analysis of an example that plants a waste. Without a GPU the demos run on the simulated
# driver built under tests/fakecuda.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/deps.sh
bash scripts/build.sh
build=${BUILD_DIR:-build}
if nvidia-smi >/dev/null 2>&1; then
  echo "== running the demo on the GPU"
else
  echo "== no GPU here: running the demo on the simulated driver (tests/fakecuda)"
  export LD_LIBRARY_PATH="$PWD/$build/tests/fakecuda${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
  export GPUWATCH_CUPTI="$PWD/$build/tests/fakecupti/libcupti.so.13"   # its simulated CUPTI
fi
out=$(mktemp -d /tmp/gpuwatch-demo-XXXXXX)
"$build/tools/gpuwatch" run --output "$out" -- "$build/examples/example_train_loop" --steps 20
echo "== what was captured"
"$build/tools/gpuwatch" stats "$out"/*.gwt
echo "== what wastes the GPU: an example whose host loads every batch itself (examples/dataloader_bound.c)"
planted=$(mktemp -d /tmp/gpuwatch-planted-XXXXXX)
"$build/tools/gpuwatch" run --no-analyze --output "$planted" -- \
  "$build/examples/example_dataloader_bound" --steps 40 >/dev/null 2>&1
"$build/tools/gpuwatch" analyze --brief "$planted"
